import { Metric } from "effect"

/**
 * A counter of events, exported as a monotonic total: it only ever goes up, so scrapers may treat a drop as a
 * restart. Tag it per event (`Metric.tagged`) for the breakdowns its description names.
 */
export const eventCounter = (name: string, description: string) =>
  Metric.counter(name, { description, incremental: true })
