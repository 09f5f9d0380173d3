import { hashSecret } from "./secrets"

/** How pushes reach an application: the seed's `/users/{uid}` paths, or the paths gds-sso mounts. */
export type PushFormat = "seed" | "gds-sso"

export interface Application {
  readonly id: string
  /** Unique; the key of the application in a user's full permissions object. */
  readonly name: string
  readonly description: string
  readonly homeUri: string
  readonly redirectUris: ReadonlyArray<string>
  readonly clientIdHash: string
  readonly clientSecretHash: string
  /** The permissions the application knows; always `signin`. */
  readonly permissions: ReadonlyArray<string>
  readonly pushUpdates: boolean
  readonly pushFormat: PushFormat
  /** Authorization requests must carry a PKCE S256 challenge. */
  readonly requirePkce: boolean
  /** Its users must sign in with two-step verification, and set it up first if they have not. */
  readonly requireTwoStep: boolean
  readonly retired: boolean
  readonly createdAt: Date
}

export interface User {
  readonly uid: string
  readonly name: string
  readonly email: string
  /** argon2id; `null` for API users, who never sign in with a password. */
  readonly passwordHash: string | null
  readonly isApiUser: boolean
  readonly organisationSlug: string | null
  readonly organisationContentId: string | null
  readonly suspendedAt: Date | null
  readonly suspensionReason: string | null
  /** Wrong passwords since the last successful sign-in or unlock. */
  readonly failedSignIns: number
  readonly lockedUntil: Date | null
  readonly createdAt: Date
}

/** A user's permissions on one application. */
export interface ApplicationPermissions {
  readonly applicationId: string
  readonly permissions: ReadonlyArray<string>
}

/** An authorization code: single use, short-lived, bound to its client, redirect URI and PKCE challenge. */
export interface Grant {
  readonly codeHash: string
  readonly applicationId: string
  readonly userUid: string
  readonly redirectUri: string
  readonly codeChallenge: string | null
  readonly scopes: ReadonlyArray<string>
  readonly nonce: string | null
  /** When the user last entered their password: the `auth_time` of an id_token. */
  readonly authTime: Date
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly usedAt: Date | null
}

/** Tokens issued by the authorization code flow, or in advance to an API user. */
export type TokenKind = "oauth" | "api"

export interface AccessToken {
  readonly id: string
  readonly tokenHash: string
  readonly kind: TokenKind
  readonly applicationId: string
  readonly userUid: string
  readonly scopes: ReadonlyArray<string>
  /** The code the token came from, directly or through refreshes; reusing that code revokes it. */
  readonly grantCodeHash: string | null
  /** The refresh chain the token belongs to; reusing a rotated refresh token of the chain revokes it. */
  readonly chainId: string | null
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly revokedAt: Date | null
}

export interface RefreshToken {
  readonly id: string
  readonly tokenHash: string
  readonly applicationId: string
  readonly userUid: string
  readonly scopes: ReadonlyArray<string>
  readonly grantCodeHash: string | null
  readonly chainId: string
  readonly authTime: Date
  readonly createdAt: Date
  /** When it was exchanged for new tokens; a second exchange is a reuse. */
  readonly usedAt: Date | null
  readonly revokedAt: Date | null
}

/** A signed-in browser. */
export interface SignInSession {
  readonly idHash: string
  readonly userUid: string
  readonly csrfToken: string
  readonly authTime: Date
  readonly lastSeenAt: Date
  /** The password was right, and the user's two-step code is still to come: not signed in yet. */
  readonly awaitingSecondStep: boolean
}

/** A user's two-step verification: their TOTP secret, confirmed or still being set up. */
export interface TwoStep {
  readonly userUid: string
  readonly secret: string
  /** When the user confirmed it with a code (or ops gave it); `null` while the set-up is in progress. */
  readonly confirmedAt: Date | null
  /** The time step of the last code accepted: no code of it or an earlier step works again. */
  readonly lastStep: number | null
  readonly recoveryCodesLeft: number
}

/** What an emailed one-time link lets its holder do: set a first password, or a new one. */
export type EmailLinkPurpose = "invitation" | "password_reset"

/** A one-time link sent by email; only its token's hash is kept. */
export interface EmailLink {
  readonly id: string
  readonly userUid: string
  readonly purpose: EmailLinkPurpose
  readonly tokenHash: string
  readonly createdAt: Date
  readonly expiresAt: Date
  /** When it was used, or ended unused because the user's password was set; `null` while it works. */
  readonly usedAt: Date | null
}

export interface SsoEvent {
  readonly at: Date
  readonly kind: string
  readonly userUid: string | null
  readonly applicationId: string | null
  readonly detail: Readonly<Record<string, unknown>>
}

export const isLive = (token: { readonly expiresAt: Date; readonly revokedAt: Date | null }, now: Date): boolean =>
  token.revokedAt === null && token.expiresAt.getTime() > now.getTime()

/** A key pair that signs id_tokens. A retired key signs nothing more but stays published while its tokens live. */
export interface SigningKey {
  readonly kid: string
  readonly privateJwk: Readonly<Record<string, unknown>>
  readonly publicJwk: Readonly<Record<string, unknown>>
  readonly createdAt: Date
  readonly retiredAt: Date | null
}

/** A long-lived API token issued in advance: no scopes, no code or refresh chain behind it. */
export const apiTokenRecord = (token: {
  readonly id: string
  readonly secret: string
  readonly applicationId: string
  readonly userUid: string
  readonly createdAt: Date
  readonly expiresAt: Date
}): AccessToken => ({
  id: token.id,
  tokenHash: hashSecret(token.secret),
  kind: "api",
  applicationId: token.applicationId,
  userUid: token.userUid,
  scopes: [],
  grantCodeHash: null,
  chainId: null,
  createdAt: token.createdAt,
  expiresAt: token.expiresAt,
  revokedAt: null
})
