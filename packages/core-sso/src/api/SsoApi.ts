import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
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

const JsonUtf8 = { kind: "Json", contentType: "application/json; charset=utf-8" } as const
const json = <A, I, R>(schema: Schema.Schema<A, I, R>) => schema.pipe(HttpApiSchema.withEncoding(JsonUtf8))

const tokenEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(TokenForm)
    .addSuccess(json(TokenResponse))
    .addError(OAuthRequestRefusedResponse)
    .addError(OAuthClientRefusedResponse)
    .addError(OAuthThrottledResponse)

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
  .add(
    HttpApiEndpoint.post("revoke", "/oauth/revoke")
      .setPayload(TokenQueryForm)
      .addSuccess(json(Schema.Struct({})))
      .addError(OAuthRequestRefusedResponse)
      .addError(OAuthClientRefusedResponse)
      .addError(OAuthThrottledResponse)
  )
  .add(
    HttpApiEndpoint.post("introspect", "/oauth/introspect")
      .setPayload(TokenQueryForm)
      .addSuccess(json(IntrospectionResponse))
      .addError(OAuthRequestRefusedResponse)
      .addError(OAuthClientRefusedResponse)
      .addError(OAuthThrottledResponse)
  )
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

const SignOutForm = Schema.Struct({ authenticity_token: Schema.optional(Schema.String) }).pipe(
  HttpApiSchema.withEncoding({ kind: "UrlParams" })
)

/**
 * What a person's browser uses: the authorization endpoint and the sign-in pages. HTML pages and redirects (302 to
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
{}

/** The SSO's API on its own, as client apps and the SDK see it. */
export class SsoApi extends HttpApi.make("sso").add(OAuthGroup).add(BrowserGroup).add(AdminGroup) {}
