import { Problem } from "./problems"

const redirectStatuses: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

/** A redirect is followed only when it has one of the redirect statuses and says where to go. */
export const isFollowableRedirect = (status: number, location: string | undefined): boolean =>
  redirectStatuses.has(status) && location !== undefined && location.trim() !== ""

/** Statuses worth asking again in a background check: the website asked us to come back later. */
export const isRetriedInBackground = (status: number): boolean => status === 429 || status === 503

/**
 * The problem of a final (not followed) response, or null for 200. `cfMitigated` is the
 * `cf-mitigated` response header, which says `challenge` when a bot wall answered instead of the page.
 */
export const problemForStatus = (status: number, cfMitigated: string | undefined): Problem | null => {
  if (status === 200) return null
  if (status === 404 || status === 410) return Problem.PageNotFound({ status })
  if (status === 401 || status === 403) {
    return cfMitigated?.trim().toLowerCase() === "challenge"
      ? Problem.BlocksRobots({ status })
      : Problem.RequiresLogin({ status })
  }
  if (status === 429) return Problem.RateLimited()
  if (status >= 400 && status <= 499) return Problem.ClientError({ status })
  if (status >= 500 && status <= 599) return Problem.ServerError({ status })
  return Problem.UnusualStatus({ status })
}

/** Whether a response of this content type is an HTML page whose head is worth reading. */
export const isHtml = (contentType: string | undefined): boolean =>
  /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i.test(contentType ?? "")

const matureRatings: ReadonlySet<string> = new Set(["mature", "restricted", "adult", "rta-5042-1996-1400-1577-rta"])

const attributePattern = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g

const attributesOf = (tag: string): ReadonlyMap<string, string> => {
  const attributes = new Map<string, string>()
  for (const match of tag.slice("<meta".length).matchAll(attributePattern)) {
    const name = match[1]?.toLowerCase()
    if (name !== undefined && !attributes.has(name)) attributes.set(name, match[2] ?? match[3] ?? match[4] ?? "")
  }
  return attributes
}

/** True when the HTML has `<meta name="rating">` whose content marks the page as for adults only. */
export const hasMatureRating = (html: string): boolean => {
  for (const [tag] of html.matchAll(/<meta\b[^>]*>/gi)) {
    const attributes = attributesOf(tag)
    if (attributes.get("name")?.trim().toLowerCase() !== "rating") continue
    const values = (attributes.get("content") ?? "").toLowerCase().split(/[\s,;]+/)
    if (values.some((value) => matureRatings.has(value))) return true
  }
  return false
}
