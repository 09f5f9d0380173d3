import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { json } from "@civicstack/kit/access"
import { Schema } from "effect"
import { AdminGroup } from "./admin"
import {
  InvalidTokenResponse,
  OAuthClientRefusedResponse,
  OAuthRequestRefusedResponse,
  OAuthThrottledResponse
} from "./errors"
import type { InvalidToken, OAuthClientRefused, OAuthRequestRefused, OAuthThrottled } from "./errors"
import {
  ClientUser,
  IntrospectionResponse,
  JsonWebKeySet,
  OpenIdConfiguration,
  ServerMetadata,
  TokenForm,
  TokenQueryForm,
  TokenResponse,
  UserInfo,
  UserJsonParams
} from "./oauth"

/**
 * The errors the endpoints declare. Also gives declaration files a local name for each, which bundled SDK
 * declarations need.
 */
export type SsoError = OAuthRequestRefused | OAuthClientRefused | OAuthThrottled | InvalidToken


/** A POST that authenticates its client, so may answer with any of OAuth's refusals (RFC 6749 §5.2). */
const clientEndpoint = <
  const Name extends string,
  const Path extends `/${string}`,
  Payload extends Schema.Schema<any, any, never>,
  Success extends Schema.Schema<any, any, never>
>(name: Name, path: Path, payload: Payload, success: Success) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(payload)
    .addSuccess(json(success))
    .addError(OAuthRequestRefusedResponse)
    .addError(OAuthClientRefusedResponse)
    .addError(OAuthThrottledResponse)

const tokenEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  clientEndpoint(name, path, TokenForm, TokenResponse)

/** The OAuth 2 endpoints: token exchange (three paths), the user details, revocation, introspection, metadata. */
export class OAuthGroup extends HttpApiGroup.make("oauth")
  .add(tokenEndpoint("token", "/token"))
  .add(tokenEndpoint("oauthToken", "/oauth/token"))
  .add(tokenEndpoint("accessToken", "/oauth/access_token"))
  .add(
    HttpApiEndpoint.get("user", "/user.json")
      .setUrlParams(UserJsonParams)
      .addSuccess(json(ClientUser))
      .addError(InvalidTokenResponse)
  )
  .add(clientEndpoint("revoke", "/oauth/revoke", TokenQueryForm, Schema.Struct({})))
  .add(clientEndpoint("introspect", "/oauth/introspect", TokenQueryForm, IntrospectionResponse))
  .add(HttpApiEndpoint.get("metadata", "/.well-known/oauth-authorization-server").addSuccess(json(ServerMetadata)))
  .add(HttpApiEndpoint.get("openidConfiguration", "/.well-known/openid-configuration").addSuccess(json(OpenIdConfiguration)))
  .add(HttpApiEndpoint.get("jwks", "/.well-known/jwks.json").addSuccess(json(JsonWebKeySet)))
  .add(HttpApiEndpoint.get("userInfo", "/oauth/userinfo").addSuccess(json(UserInfo)).addError(InvalidTokenResponse))
{}

const Html = HttpApiSchema.Text({ contentType: "text/html; charset=utf-8" })

const SignInForm = Schema.Struct({
  email: Schema.optional(Schema.String),
  password: Schema.optional(Schema.String),
  authenticity_token: Schema.optional(Schema.String),
  return_to: Schema.optional(Schema.String)
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

/** Any form; each page reads the fields it knows and checks them itself. */
const AnyForm = Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
  HttpApiSchema.withEncoding({ kind: "UrlParams" })
)

/** A two-step code: at sign-in (the app's code or a recovery code), or to confirm a set-up. */
const CodeForm = Schema.Struct({
  code: Schema.optional(Schema.String),
  authenticity_token: Schema.optional(Schema.String),
  return_to: Schema.optional(Schema.String)
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

const SignOutForm = Schema.Struct({ authenticity_token: Schema.optional(Schema.String) }).pipe(
  HttpApiSchema.withEncoding({ kind: "UrlParams" })
)

/**
 * What a person's browser uses: the authorization endpoint, the sign-in pages (with the second step) and the account
 * pages (with the set-up of two-step verification). HTML pages and redirects (302 to
 * the application, 303 after a form), working without JavaScript.
 */
export class BrowserGroup extends HttpApiGroup.make("browser")
  .add(
    HttpApiEndpoint.get("authorize", "/oauth/authorize")
      .addSuccess(Html)
      .annotate(OpenApi.Description, "response_type=code, client_id, redirect_uri, state (required), code_challenge and code_challenge_method=S256, scope, nonce")
  )
  .add(HttpApiEndpoint.get("signInPage", "/users/sign_in").addSuccess(Html))
  .add(HttpApiEndpoint.post("signIn", "/users/sign_in").setPayload(SignInForm).addSuccess(Html))
  .add(HttpApiEndpoint.post("signOut", "/users/sign_out").setPayload(SignOutForm).addSuccess(Html))
  .add(HttpApiEndpoint.get("secondStepPage", "/users/two_step").addSuccess(Html))
  .add(HttpApiEndpoint.post("secondStep", "/users/two_step").setPayload(CodeForm).addSuccess(Html))
  .add(HttpApiEndpoint.get("accountPage", "/account").addSuccess(Html))
  .add(HttpApiEndpoint.post("changePassword", "/account/password").setPayload(AnyForm).addSuccess(Html))
  .add(HttpApiEndpoint.get("twoStepSetUpPage", "/account/two_step").addSuccess(Html))
  .add(HttpApiEndpoint.post("twoStepSetUp", "/account/two_step").setPayload(CodeForm).addSuccess(Html))
{}

const UserPath = Schema.Struct({ uid: Schema.String })

const ApplicationPath = Schema.Struct({ id: Schema.String })

const applicationAction = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path).setPath(ApplicationPath).setPayload(AnyForm).addSuccess(Html)

const userAction = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path).setPath(UserPath).setPayload(AnyForm).addSuccess(Html)

/**
 * The pages of the people who use the sign-on: the home page of every user, and the pages where administrators
 * manage users. HTML, working without JavaScript, under the rules of the sign-in pages.
 */
export class ManageGroup extends HttpApiGroup.make("manage")
  .add(HttpApiEndpoint.get("home", "/").addSuccess(Html))
  .add(HttpApiEndpoint.get("users", "/manage/users").addSuccess(Html))
  .add(HttpApiEndpoint.get("user", "/manage/users/:uid").setPath(UserPath).addSuccess(Html))
  .add(userAction("setPermissions", "/manage/users/:uid/permissions"))
  .add(userAction("suspend", "/manage/users/:uid/suspend"))
  .add(userAction("unsuspend", "/manage/users/:uid/unsuspend"))
  .add(userAction("unlock", "/manage/users/:uid/unlock"))
  .add(userAction("resetTwoStep", "/manage/users/:uid/reset_2sv"))
  .add(userAction("resendInvitation", "/manage/users/:uid/resend_invitation"))
  .add(HttpApiEndpoint.get("applications", "/manage/applications").addSuccess(Html))
  .add(HttpApiEndpoint.get("newApplication", "/manage/applications/new").addSuccess(Html))
  .add(HttpApiEndpoint.post("createApplication", "/manage/applications").setPayload(AnyForm).addSuccess(Html))
  .add(HttpApiEndpoint.get("application", "/manage/applications/:id").setPath(ApplicationPath).addSuccess(Html))
  .add(applicationAction("updateApplication", "/manage/applications/:id"))
  .add(applicationAction("rotateSecret", "/manage/applications/:id/rotate_secret"))
  .add(HttpApiEndpoint.get("events", "/manage/events").addSuccess(Html))
  .add(HttpApiEndpoint.get("apiUsers", "/manage/api_users").addSuccess(Html))
  .add(HttpApiEndpoint.post("createApiUser", "/manage/api_users").setPayload(AnyForm).addSuccess(Html))
  .add(HttpApiEndpoint.get("apiUser", "/manage/api_users/:uid").setPath(UserPath).addSuccess(Html))
  .add(userAction("issueApiToken", "/manage/api_users/:uid/tokens"))
  .add(
    HttpApiEndpoint.post("revokeApiToken", "/manage/api_users/:uid/tokens/:id/revoke")
      .setPath(Schema.Struct({ uid: Schema.String, id: Schema.String }))
      .setPayload(AnyForm)
      .addSuccess(Html)
  )
{}

/**
 * The pages of the emailed one-time links: "Forgot your password?", the page a link opens, and the invitations
 * administrators send. HTML, working without JavaScript, under the rules of the sign-in pages.
 */
export class EmailLinkGroup extends HttpApiGroup.make("emailLinks")
  .add(HttpApiEndpoint.get("forgotPasswordPage", "/users/password/new").addSuccess(Html))
  .add(HttpApiEndpoint.post("requestPasswordReset", "/users/password").setPayload(AnyForm).addSuccess(Html))
  .add(HttpApiEndpoint.get("choosePasswordPage", "/users/password/edit").addSuccess(Html))
  .add(HttpApiEndpoint.post("choosePassword", "/users/password/edit").setPayload(AnyForm).addSuccess(Html))
  .add(HttpApiEndpoint.get("newInvitation", "/manage/users/new").addSuccess(Html))
  .add(HttpApiEndpoint.post("invite", "/manage/users").setPayload(AnyForm).addSuccess(Html))
{}

/** Every group of the SSO's endpoints: what a host adds to its `HttpApi` to serve them with `ssoHandlers`. */
export type SsoGroups = typeof OAuthGroup | typeof BrowserGroup | typeof AdminGroup | typeof ManageGroup | typeof EmailLinkGroup

/** Every group of the SSO added to a host's API, which serves them with `ssoHandlers`. */
export const addSsoGroups = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) => api.add(OAuthGroup).add(BrowserGroup).add(AdminGroup).add(ManageGroup).add(EmailLinkGroup)

/** The SSO's API on its own, as client apps and the SDK see it. */
export class SsoApi extends addSsoGroups(HttpApi.make("sso")) {}
