export {
  AdminApplication,
  AdminConflict,
  AdminEvent,
  AdminForbidden,
  AdminInvalid,
  AdminNotFound,
  AdminUnauthorized,
  AdminUser,
  ClientUser,
  InvalidToken,
  OAuthClientRefused,
  OAuthRequestRefused,
  OAuthThrottled,
  TokenResponse
} from "@civicstack/core-sso/api"
export {
  type CreatedApplication,
  type IssuedToken,
  type IssueTokenInput,
  makeSsoAdminClient,
  type NewApplicationInput,
  type NewUserInput,
  type PermissionsInput,
  SsoAdminApi,
  SsoAdminClient,
  type SsoAdminClientOptions,
  type SsoAdminClientService,
  type SsoAdminError,
  type UserChangesInput
} from "./AdminClient"
export { OAuthCallbackError, SsoClientError, TokenRefused } from "./errors"
export {
  bearerTokenOf,
  DEFAULT_CACHE_TTL,
  DEFAULT_MAX_CACHED_TOKENS,
  DEFAULT_REFUSAL_CACHE_TTL,
  makeSsoGuard,
  MAX_CACHE_TTL,
  SsoGuard,
  type SsoGuardOptions,
  type SsoGuardService,
  type VerifyOptions
} from "./Guard"
export type { NextFunction, NodeRequestLike, NodeResponseLike } from "./nodeHttp"
export {
  accessTokenExpiresAt,
  type AuthorizationRequest,
  type AuthorizationStart,
  authorizationUrl,
  type CallbackInput,
  checkCallback,
  codeChallengeOf,
  makeSsoOAuthClient,
  SsoOAuthClient,
  type SsoOAuthClientOptions,
  type SsoOAuthClientService,
  type TokenRequestError
} from "./OAuthClient"
export { createSsoAdminClient, type CreateSsoAdminClientOptions, type SsoAdminPromiseClient } from "./promiseAdminClient"
export { type CreateSsoGuardOptions, createSsoGuard, type GuardedRequest, type SsoPromiseGuard } from "./promiseGuard"
export { createSsoOAuthClient, type CreateSsoOAuthClientOptions, type SsoOAuthPromiseClient } from "./promiseOAuthClient"
export {
  createPushReceiver,
  GdsSsoPushBody,
  type GdsSsoPushedUser,
  type PushedUserOf,
  type PushFormat,
  type PushReceiver,
  type PushReceiverOptions,
  type PushRequest,
  SeedPushBody,
  type SeedPushedUser,
  USER_UPDATE_PERMISSION
} from "./pushes"
export { pushHandler, type PushHandlerOptions } from "./pushRouter"
export { SsoOAuthApi, type SsoUser } from "./userEndpoint"
