/**
 * A small cookie jar for one redirect chain: some websites set a cookie and redirect only when it comes back.
 * It honours name=value, Domain and Path loosely, and Max-Age <= 0 as a deletion; nothing outlives the chain.
 */
export interface Cookie {
  readonly name: string
  readonly value: string
  /** Without a Domain attribute the cookie goes back only to the host that set it. */
  readonly domain: string
  readonly hostOnly: boolean
  readonly path: string
}

export type CookieJar = ReadonlyArray<Cookie>

export const emptyCookieJar: CookieJar = []

const domainMatches = (host: string, domain: string): boolean => host === domain || host.endsWith(`.${domain}`)

const pathMatches = (requestPath: string, cookiePath: string): boolean =>
  requestPath === cookiePath ||
  (requestPath.startsWith(cookiePath) && (cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/"))

interface ParsedSetCookie {
  readonly cookie: Cookie
  readonly expired: boolean
}

const parseSetCookie = (header: string, url: URL): ParsedSetCookie | null => {
  const [pair = "", ...attributeTexts] = header.split(";")
  const separator = pair.indexOf("=")
  if (separator <= 0) return null
  const name = pair.slice(0, separator).trim()
  const value = pair.slice(separator + 1).trim()
  if (name === "") return null

  const host = url.hostname.toLowerCase()
  let domain = host
  let hostOnly = true
  let path = "/"
  let expired = false
  for (const attributeText of attributeTexts) {
    const equals = attributeText.indexOf("=")
    const key = (equals === -1 ? attributeText : attributeText.slice(0, equals)).trim().toLowerCase()
    const attributeValue = equals === -1 ? "" : attributeText.slice(equals + 1).trim()
    if (key === "domain" && attributeValue !== "") {
      const wanted = attributeValue.replace(/^\./, "").toLowerCase()
      if (!domainMatches(host, wanted)) return null
      domain = wanted
      hostOnly = false
    } else if (key === "path" && attributeValue.startsWith("/")) {
      path = attributeValue
    } else if (key === "max-age" && /^-?\d+$/.test(attributeValue)) {
      expired = Number(attributeValue) <= 0
    }
  }
  return { cookie: { name, value, domain, hostOnly, path }, expired }
}

const sameCookie = (a: Cookie, b: Cookie): boolean => a.name === b.name && a.domain === b.domain && a.path === b.path

/** The jar after a response from `url` with these `Set-Cookie` header values. */
export const storeCookies = (jar: CookieJar, setCookieHeaders: ReadonlyArray<string>, url: URL): CookieJar =>
  setCookieHeaders.reduce<CookieJar>((current, header) => {
    const parsed = parseSetCookie(header, url)
    if (parsed === null) return current
    const others = current.filter((cookie) => !sameCookie(cookie, parsed.cookie))
    return parsed.expired ? others : [...others, parsed.cookie]
  }, jar)

/** The `Cookie` header value to send with a request to `url`, or undefined when no cookie matches. */
export const cookieHeaderFor = (jar: CookieJar, url: URL): string | undefined => {
  const host = url.hostname.toLowerCase()
  const matching = jar.filter((cookie) =>
    (cookie.hostOnly ? host === cookie.domain : domainMatches(host, cookie.domain)) &&
    pathMatches(url.pathname, cookie.path)
  )
  return matching.length === 0 ? undefined : matching.map((cookie) => `${cookie.name}=${cookie.value}`).join("; ")
}
