import { Effect, FiberRef, Option, Tracer } from "effect"

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/

/**
 * The W3C `traceparent` of the span the caller runs in, for work done later (a job, a batch's checks) to link back
 * to; null outside any span, or when no tracer records spans.
 */
export const currentTraceParent: Effect.Effect<string | null> = Effect.map(
  Effect.option(Effect.currentSpan),
  (span) => Option.isSome(span) && span.value.sampled ? `00-${span.value.traceId}-${span.value.spanId}-01` : null
)

/** A link to the span that `traceParent` names; none for null or a malformed value. */
export const linksTo = (traceParent: string | null): ReadonlyArray<Tracer.SpanLink> => {
  const parts = traceParent === null ? null : TRACE_PARENT.exec(traceParent)
  if (parts === null) return []
  return [{
    _tag: "SpanLink",
    span: Tracer.externalSpan({ traceId: parts[1]!, spanId: parts[2]!, sampled: true }),
    attributes: {}
  }]
}

/**
 * Runs `self` in a span when spans are recorded. With tracing off (`Layer.setTracerEnabled(false)`) it adds nothing,
 * where `Effect.withSpan` would still make a no-op span and capture a stack trace: for work done once per link.
 * `attributes` is only called when the span is made.
 */
export const withSpanWhenTracing = (
  name: string,
  options: { readonly kind?: Tracer.SpanKind; readonly attributes?: () => Record<string, unknown> } = {}
) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (enabled) =>
    enabled
      ? Effect.withSpan(self, name, {
        ...(options.kind === undefined ? {} : { kind: options.kind }),
        attributes: options.attributes?.() ?? {},
        captureStackTrace: false
      })
      : self)

/**
 * Sets an attribute of the span the caller runs in, if there is one. `Effect.annotateCurrentSpan` builds an error
 * (with its stack trace) whenever there is none, as with tracing off.
 */
export const annotateSpan = (key: string, value: unknown): Effect.Effect<void> =>
  Effect.map(Effect.serviceOption(Tracer.ParentSpan), (span) => {
    if (Option.isSome(span) && span.value._tag === "Span") span.value.attribute(key, value)
  })
