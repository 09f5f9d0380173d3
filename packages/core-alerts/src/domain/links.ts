import type { DeliverySettings } from "../settings"

/** `publicSiteUrl` with `path` (which starts with a slash) after it. */
export const siteLink = (settings: Pick<DeliverySettings, "publicSiteUrl">, path: string) =>
  `${settings.publicSiteUrl.replace(/\/+$/, "")}${path}`

export const unsubscribeUrlPrefix = (settings: Pick<DeliverySettings, "publicSiteUrl">) =>
  siteLink(settings, "/email/unsubscribe/")
