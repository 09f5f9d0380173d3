const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Why an application's redirect URI is refused, or `undefined` when it is acceptable: absolute, no fragment, https;
 * http only for loopback hosts outside production.
 */
export const redirectUriProblem = (uri: string, options: { readonly production: boolean }): string | undefined => {
  if (!URL.canParse(uri)) return "must be an absolute URL"
  const url = new URL(uri)
  if (url.hash !== "" || uri.includes("#")) return "must not have a fragment"
  if (url.username !== "" || url.password !== "") return "must not carry credentials"
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname) && !options.production) return undefined
  return options.production ? "must use https" : "must use https (http only for localhost)"
}

/** Redirect URIs match exactly, character for character (RFC 6749 section 3.1.2.3; no normalisation). */
export const isRegisteredRedirect = (registered: ReadonlyArray<string>, presented: string): boolean =>
  registered.includes(presented)

/** The redirect back to the client with `params` added to its query (the registered URI may have one already). */
export const redirectWith = (redirectUri: string, params: Record<string, string | undefined>): string => {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value)
  }
  return url.toString()
}
