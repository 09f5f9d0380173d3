import { Schema } from "effect"

/** linkinator's process writes this line once it is loaded, then starts when its stdin ends. */
export const linkinatorReadyLine = "LINKINATOR_READY"
/** Then it writes this prefix and its `LinkinatorOutcome` JSON as one stdout line. */
export const linkinatorResultPrefix = "LINKINATOR_RESULT "

export const LinkinatorOutcome = Schema.Struct({
  /** From the call of `check` to its result. */
  elapsedMs: Schema.Number,
  /** Results linkinator reported: the page itself and each of its links. */
  results: Schema.Int,
  ok: Schema.Int,
  broken: Schema.Int,
  skipped: Schema.Int,
  /** CPU time of linkinator's process during `check`. */
  cpuMs: Schema.Number,
  /** Peak RSS of linkinator's process over its life, its RSS when `check` was called, and its peak during `check`. */
  peakRssBytes: Schema.Number,
  startRssBytes: Schema.Number,
  checkPeakRssBytes: Schema.Number
})
export type LinkinatorOutcome = typeof LinkinatorOutcome.Type
