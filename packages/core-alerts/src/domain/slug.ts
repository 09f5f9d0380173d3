export const MAX_SLUG_LENGTH = 255

/** When a title has no letters or digits at all. */
const FALLBACK_SLUG = "subscriber-list"

/**
 * A list's slug from its title: lowercase ASCII letters and digits joined by single hyphens (accents dropped,
 * other characters become hyphens), at most 255 characters.
 */
export const slugify = (title: string): string => {
  const slug = title
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, "")
  return slug === "" ? FALLBACK_SLUG : slug
}

/** The `n`th slug tried for `base`: the base itself, then `base-2`, `base-3`... within the length limit. */
export const slugCandidate = (base: string, n: number): string => {
  if (n <= 1) return base
  const suffix = `-${n}`
  return `${base.slice(0, MAX_SLUG_LENGTH - suffix.length).replace(/-+$/, "")}${suffix}`
}

/** The first candidate for `base` that is not `taken`. */
export const firstFreeSlug = (base: string, taken: ReadonlySet<string>): string => {
  for (let n = 1;; n++) {
    const candidate = slugCandidate(base, n)
    if (!taken.has(candidate)) return candidate
  }
}
