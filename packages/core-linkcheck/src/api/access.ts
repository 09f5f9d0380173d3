import { ApiAccess } from "@civicstack/kit/access"

export * from "@civicstack/kit/access/public"

/**
 * Who may use the link checking API: a bearer token whose user has `signin` on the `link-checker-api` application of
 * the single sign-on. The host provides it (the reference server checks tokens in-process; an embedder can use
 * sdk-sso's guard against a remote SSO, or `layerOpenAccess` behind an access check of its own).
 */
export class LinkcheckAccess extends ApiAccess<LinkcheckAccess>()("@civicstack/core-linkcheck/LinkcheckAccess") {}

/** The application of the single sign-on whose `signin` permission lets a user call the link checking API. */
export const LINKCHECK_APPLICATION = "link-checker-api"
