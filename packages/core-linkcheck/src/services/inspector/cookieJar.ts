import { CookieJar } from "tough-cookie"

/**
 * The cookies of one redirect chain: some websites set a cookie and redirect only when it comes back. Kept by
 * tough-cookie as a browser would (RFC 6265): public suffixes refused as domains, `Secure` cookies only over https,
 * expiry and deletion honoured, the default path taken from the setting URL. Nothing outlives the chain.
 */
export interface ChainCookies {
  /** Remembers the `Set-Cookie` values of a response from `url`; one a browser would refuse is ignored. */
  readonly store: (setCookieHeaders: ReadonlyArray<string>, url: URL) => void
  /** The `Cookie` header value for a request to `url`, or undefined when no cookie goes there. */
  readonly headerFor: (url: URL) => string | undefined
}

export const chainCookies = (): ChainCookies => {
  // made at the first Set-Cookie: most chains have none, and asking an empty jar costs as much as asking a full one
  let jar: CookieJar | undefined
  return {
    store: (setCookieHeaders, url) => {
      if (setCookieHeaders.length === 0) return
      // `.test`, `.localhost` and other special-use names are allowed: test fleets and intranets use them
      jar ??= new CookieJar(undefined, { rejectPublicSuffixes: true, allowSpecialUseDomain: true })
      for (const header of setCookieHeaders) jar.setCookieSync(header, url.href, { ignoreError: true })
    },
    headerFor: (url) => {
      const header = jar?.getCookieStringSync(url.href) ?? ""
      return header === "" ? undefined : header
    }
  }
}
