import type { DeliverySettings } from "../settings"

/** Percent-encodes what could end a Markdown link destination, whatever the URL parser left as it was. */
const markdownSafe = (url: string) =>
  url.replace(/[()[\]<>\s\\]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`)

/**
 * The URL of `path` on the public site, as Markdown may hold it: built with `URL`, always under `publicSiteUrl` (a
 * stored path that does not start with one slash is taken as one that does), and percent-encoded.
 */
export const siteUrl = (publicSiteUrl: string, path: string): URL =>
  new URL(`${publicSiteUrl.replace(/\/+$/, "")}/${path.replace(/^[/\\]+/, "")}`)

export const siteLink = (settings: Pick<DeliverySettings, "publicSiteUrl">, path: string) =>
  markdownSafe(siteUrl(settings.publicSiteUrl, path).href)

/** `url` with `name=value` added after the query it has, which stays as it was written. */
export const withQueryParameter = (url: URL, name: string, value: string) => {
  const added = new URL(url)
  const query = url.search.slice(1)
  added.search = `${query}${query === "" || query.endsWith("&") ? "" : "&"}${name}=${encodeURIComponent(value)}`
  return markdownSafe(added.href)
}

export const unsubscribeUrlPrefix = (settings: Pick<DeliverySettings, "publicSiteUrl">) =>
  siteLink(settings, "/email/unsubscribe/")
