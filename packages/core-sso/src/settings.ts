import type { TrustedProxies } from "@civicstack/kit"
import type { Resolver } from "@civicstack/outbound"
import { Duration } from "effect"
import type { Stream } from "effect"

/** How many failures within a window are allowed before further attempts are refused. */
export interface AttemptLimit {
  /** Failures for one client from one address. */
  readonly perClient: number
  readonly perAddress: number
  readonly window: Duration.Duration
}

/** How an embedded SSO behaves; every field has a default (`defaultSsoSettings`). */
export interface SsoSettings {
  /** The SSO's public base URL: the issuer of its tokens and the base of the URLs in its metadata. */
  readonly issuer: string
  /** The proxies in front of the server, whose `X-Forwarded-For` entries are believed (as Express's `trust proxy`). */
  readonly trustProxy: TrustedProxies
  /** Production refuses http redirect URIs, even for loopback hosts, and marks cookies `Secure`. */
  readonly production: boolean
  readonly accessTokenLifetime: Duration.Duration
  readonly codeLifetime: Duration.Duration
  /** The default lifetime of API tokens issued in advance. */
  readonly apiTokenLifetime: Duration.Duration
  /** Failed client authentications at the token, revoke and introspect endpoints. */
  readonly clientAuthentication: AttemptLimit
  /**
   * Wrong passwords per address, and per account from one address, within `window`; per account, `lockAfter` in a row
   * from anywhere lock it for `lockFor`, which later attempts do not extend. Wrong two-step codes count in the same
   * row and lock it at `lockAfterWrongCodes`; the code must come within `secondStepWithin` of the password. Turning
   * on two-step verification asks for the password again unless the session signed in within `recentFor`, so that
   * whoever holds an older session cannot tie the account to an authenticator of their own.
   */
  readonly signIn: {
    readonly perAddress: number
    readonly perAccountAndAddress: number
    readonly window: Duration.Duration
    readonly lockAfter: number
    readonly lockFor: Duration.Duration
    readonly lockAfterWrongCodes: number
    readonly secondStepWithin: Duration.Duration
    readonly recentFor: Duration.Duration
  }
  /**
   * The one-time links sent by email: how long an invitation's and a password reset's work, and how many resets may
   * be asked for in `window` from one address and for one email address (whether or not it is a user's).
   */
  readonly emailLinks: {
    readonly invitationLifetime: Duration.Duration
    readonly passwordResetLifetime: Duration.Duration
    readonly resetsPerAddress: number
    readonly resetsPerEmail: number
    readonly window: Duration.Duration
  }
  readonly sessionIdleTimeout: Duration.Duration
  /** A browser session ends this long after its sign-in however active it is. */
  readonly sessionMaxAge: Duration.Duration
  /** A refresh token chain ends this long after the sign-in that began it, however often it is refreshed. */
  readonly refreshTokenLifetime: Duration.Duration
  /**
   * Mark the session cookies `Secure` and give them the `__Host-` prefix. Unset, they are secure when the issuer is
   * https or in production; a host serving TLS itself says so.
   */
  readonly secureCookies?: boolean
  /**
   * 32-byte AES-256-GCM keys for the secrets the SSO keeps readable (the signing keys' private parts, the push
   * tokens, the TOTP secrets): the first seals, all open. Without any they are stored in the clear.
   */
  readonly encryptionKeys?: ReadonlyArray<Uint8Array>
  /** Let pushes reach loopback and private addresses (tests, intranets). */
  readonly allowPrivateAddresses: boolean
  /** Each push may take this long to connect, and this long again for the answer. */
  readonly pushTimeout: Duration.Duration
  /** Pushes sent at once by this process. */
  readonly pushConcurrency: number
  /** How long pushes on their way may take once shutdown begins before they are handed back. */
  readonly shutdownGracePeriod: Duration.Duration
  /** Resolves host names for pushes instead of the system resolver (tests). */
  readonly resolver?: Resolver
  /** Password hashes computed at once; more wait, so that a flood of sign-ins cannot take every thread. */
  readonly passwordHashConcurrency: number
  /**
   * LISTEN on the SQL store's database (e.g. `PgClient.listen`), for `layerSql`: with it `GET /user.json` answers from
   * memory, kept exact across copies by LISTEN/NOTIFY; without it every lookup reads the database.
   */
  readonly listen?: (channel: string) => Stream.Stream<string, unknown>
}

export const defaultSsoSettings: SsoSettings = {
  issuer: "http://localhost:3000",
  trustProxy: false,
  production: false,
  accessTokenLifetime: Duration.seconds(7200),
  codeLifetime: Duration.minutes(10),
  apiTokenLifetime: Duration.days(730),
  clientAuthentication: { perClient: 10, perAddress: 30, window: Duration.minutes(10) },
  signIn: { perAddress: 30, perAccountAndAddress: 5, window: Duration.minutes(10), lockAfter: 6, lockFor: Duration.hours(1),
    lockAfterWrongCodes: 10, secondStepWithin: Duration.minutes(10), recentFor: Duration.minutes(10) },
  emailLinks: { invitationLifetime: Duration.days(7), passwordResetLifetime: Duration.hours(2), resetsPerAddress: 10,
    resetsPerEmail: 3, window: Duration.hours(1) },
  sessionIdleTimeout: Duration.minutes(30),
  sessionMaxAge: Duration.hours(20),
  refreshTokenLifetime: Duration.days(90),
  passwordHashConcurrency: 2,
  allowPrivateAddresses: false,
  pushTimeout: Duration.seconds(4),
  pushConcurrency: 4,
  shutdownGracePeriod: Duration.seconds(30)
}
