import { Option, Tracer } from "effect"
import type { Context, Exit } from "effect"

/** A span as the recording tracer keeps it once it has ended. */
export interface RecordedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  readonly attributes: ReadonlyMap<string, unknown>
}

let nextId = 0
const newId = (length: number) => (++nextId).toString(16).padStart(length, "0")

/** A tracer that keeps every ended span in `ended`, for tests that look at what a piece of work traced. */
export const recordingTracer = () => {
  const ended: Array<RecordedSpan> = []
  const tracer = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      const attributes = new Map<string, unknown>()
      const allLinks = [...links]
      const traceId = Option.match(parent, { onNone: () => newId(32), onSome: (span) => span.traceId })
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: newId(16),
        traceId,
        parent,
        context: context as Context.Context<never>,
        status: { _tag: "Started", startTime },
        attributes,
        links: allLinks,
        sampled: true,
        kind,
        end(_endTime: bigint, _exit: Exit.Exit<unknown, unknown>) {
          ended.push({
            name,
            traceId,
            spanId: span.spanId,
            parentSpanId: Option.getOrUndefined(Option.map(parent, (p) => p.spanId)),
            links: allLinks.map((link) => ({ traceId: link.span.traceId, spanId: link.span.spanId })),
            attributes
          })
        },
        attribute: (key, value) => void attributes.set(key, value),
        event: () => {},
        addLinks: (more) => void allLinks.push(...more)
      }
      return span
    },
    context: (f) => f()
  })
  return { tracer, ended }
}
