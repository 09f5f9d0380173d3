import { Effect, Option, Tracer } from "effect"

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
