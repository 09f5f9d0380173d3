import { ApiAccess } from "@civicstack/kit/access"

export * from "@civicstack/kit/access/public"

/**
 * Who may use the email alert API: a bearer token whose user has `signin` on the `email-alert-api` application of
 * the single sign-on. The host provides it (the reference server checks tokens in-process; an embedder can use
 * sdk-sso's guard against a remote SSO, or `layerOpenAccess` behind an access check of its own). `/healthcheck` is
 * open.
 */
export class AlertsAccess extends ApiAccess<AlertsAccess>()("@civicstack/core-alerts/AlertsAccess") {}

/** The application of the single sign-on whose `signin` permission lets a user call the email alert API. */
export const ALERTS_APPLICATION = "email-alert-api"
