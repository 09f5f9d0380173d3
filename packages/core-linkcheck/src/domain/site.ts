import { getDomain } from "tldts"

/**
 * The key of the per-site limit: the registrable domain of the URL's host (`www.example.co.uk` and
 * `shop.example.co.uk:8443` are both `example.co.uk`), so that neither subdomains nor ports make a website count as
 * many. An IP address, or a name with no registrable domain (`localhost`), is its own site, without the port. Links
 * that make no request (not http or https, or not a URL) share the key "".
 */
export const siteOf = (uri: string): string => {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return ""
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return ""
  const hostname = url.hostname.toLowerCase()
  return getDomain(hostname) ?? hostname
}
