import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer, Option, Tracer } from "effect"
import type { Context, Exit } from "effect"
import serverPackage from "../../package.json" with { type: "json" }
import type { TracingConfig } from "../config"

/** A span that is made but never exported, as are its children. */
const unrecordedSpan = (
  name: string,
  parent: Option.Option<Tracer.AnySpan>,
  context: Context.Context<never>,
  links: ReadonlyArray<Tracer.SpanLink>,
  startTime: bigint,
  kind: Tracer.SpanKind
): Tracer.Span => ({
  _tag: "Span",
  name,
  spanId: "unrecorded",
  traceId: Option.match(parent, { onNone: () => "unrecorded", onSome: (span) => span.traceId }),
  parent,
  context,
  status: { _tag: "Started", startTime },
  attributes: new Map(),
  links,
  sampled: false,
  kind,
  end: (_endTime: bigint, _exit: Exit.Exit<unknown, unknown>) => {},
  attribute: () => {},
  event: () => {},
  addLinks: () => {}
})

/** A request's query may carry what the caller keeps private (a checked link's own query, a code): spans keep its path. */
const withoutQuery = (span: Tracer.Span): Tracer.Span => {
  const record = span.attribute.bind(span)
  span.attribute = (key, value) => {
    if (key === "url.query") return
    record(key, key === "url.full" && typeof value === "string" ? value.split("?", 1)[0] : value)
  }
  return span
}

/**
 * Leaves out what no one asked for, and requests' queries: the statements that background loops run on their own (polling for work, leases,
 * readiness figures), which would otherwise each be a trace, once a second per loop. Work a loop finds (a job, a
 * check, a delivery) has a span of its own, and its statements are its children. A span under one left out, or
 * under a caller's span that was not sampled, is left out too.
 */
const recordedOnly = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const unrecorded = Option.match(parent, { onNone: () => name.startsWith("sql."), onSome: (span) => !span.sampled })
      return unrecorded
        ? unrecordedSpan(name, parent, context, links, startTime, kind)
        : withoutQuery(tracer.span(name, parent, context, links, startTime, kind))
    },
    context: tracer.context
  })

/**
 * With an OTLP endpoint set, spans go to it over OTLP/HTTP, in batches, flushed when the server stops. Without one no
 * spans are made at all: the HTTP stack and the SQL client would otherwise make one for every request and statement,
 * to be dropped unread.
 */
export const tracingLayer = (tracing: TracingConfig | undefined): Layer.Layer<never> =>
  tracing === undefined ? Layer.setTracerEnabled(false) : Layer.unwrapScoped(
    Effect.map(
      OtlpTracer.make({
        url: tracing.url,
        headers: tracing.headers,
        resource: { serviceName: tracing.serviceName, serviceVersion: serverPackage.version }
      }),
      (tracer) => Layer.setTracer(recordedOnly(tracer))
    )
  ).pipe(
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(tracing.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf)
  )
