/** Nearest-rank percentile of values already sorted ascending; null when there are none. */
export const percentileOfSorted = (sorted: Float64Array, percent: number): number | null => {
  if (sorted.length === 0) return null
  const rank = Math.min(Math.max(Math.ceil((percent / 100) * sorted.length), 1), sorted.length)
  return sorted[rank - 1] ?? null
}

/** The middle value, or the mean of the two middle ones when the count is even; null when there are none. */
export const median = (values: ReadonlyArray<number>): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
