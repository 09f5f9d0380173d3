/** Nearest-rank percentile of values already sorted ascending; null when there are none. */
export const percentileOfSorted = (sorted: Float64Array, percent: number): number | null => {
  if (sorted.length === 0) return null
  const rank = Math.min(Math.max(Math.ceil((percent / 100) * sorted.length), 1), sorted.length)
  return sorted[rank - 1] ?? null
}
