import { Duration } from "effect"
import type { Redacted } from "effect"
import type { DeliverySettings } from "./delivery/settings"

/** Where a health check turns `warning`, and where it turns `critical` (a value at the threshold counts). */
export interface Thresholds<A> {
  readonly warning: A
  readonly critical: A
}

export interface HealthThresholds {
  /** Emails waiting to be sent plus fan-out and digest jobs not yet done. */
  readonly queueSize: Thresholds<number>
  /** How long the oldest email for an immediate subscriber has waited. */
  readonly queueAge: Thresholds<Duration.Duration>
}

/** How an embedded email alert service behaves; every field but the secret has a default (`defaultAlertsSettings`). */
export interface AlertsSettings {
  /** Base of the links in emails and of `subscription_url` (e.g. `https://www.example.org`); the host's setting. */
  readonly publicSiteUrl: string
  /**
   * HS256 secret of the auth-token JWTs. When left out, the service makes a random one for its own lifetime, so
   * tokens it sent stop working when it restarts: a host keeps one (`ALERTS_AUTH_TOKEN_SECRET`).
   */
  readonly authTokenSecret: Redacted.Redacted<string>
  /** The `iss` claim of the auth-token JWTs. */
  readonly authTokenIssuer: string
  readonly healthThresholds: HealthThresholds
  /** How emails are made and sent (`publicSiteUrl` above is theirs too); unset fields take their defaults. */
  readonly delivery: Partial<Omit<DeliverySettings, "publicSiteUrl">>
}

export const defaultAlertsSettings: Omit<AlertsSettings, "authTokenSecret"> = {
  publicSiteUrl: "http://localhost:3000",
  authTokenIssuer: "civicstack-email-alerts",
  healthThresholds: {
    queueSize: { warning: 75_000, critical: 100_000 },
    queueAge: { warning: Duration.seconds(150), critical: Duration.seconds(300) }
  },
  delivery: {}
}
