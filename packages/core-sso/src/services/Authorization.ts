import { now } from "@civicstack/kit"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { isCodeChallenge } from "../domain/pkce"
import type { Application, User } from "../domain/records"
import { isRegisteredRedirect, redirectWith } from "../domain/redirectUris"
import { hashSecret, isSecretShaped, newSecret } from "../domain/secrets"
import type { StoreError } from "../storage/SsoStore"
import { accessProblem } from "../domain/access"
import { permissionsOn } from "./access"
import { SsoParts } from "./SsoParts"
import { hasTwoStep, twoStepRequired } from "./TwoStep"

/** The query of `GET /oauth/authorize`, each parameter once (a repeated one is a bad request). */
export type AuthorizeQuery = Readonly<Record<string, string | ReadonlyArray<string>>>

/** The scopes a client may ask for; none is needed for the plain OAuth 2 flow of the seed. */
export const SUPPORTED_SCOPES = ["openid", "profile", "email"] as const

/** What the authorization endpoint does with a request. */
export type AuthorizeOutcome =
  /** An unknown client or redirect URI: never redirect, show this on an error page. */
  | { readonly _tag: "ErrorPage"; readonly message: string }
  /** Back to the client, with a code or an error. */
  | { readonly _tag: "Redirect"; readonly location: string }
  /** Nobody is signed in: sign in, then come back to the same request. */
  | { readonly _tag: "SignInRequired"; readonly application: Application }
  /** Signed in, but without permission to use the application. */
  | { readonly _tag: "NoAccess"; readonly application: Application; readonly user: User; readonly reason: string }
  /** Signed in, but two-step verification is required of the user and not set up: set it up, then come back. */
  | { readonly _tag: "TwoStepSetUpRequired"; readonly application: Application }

/** The browser's signed-in user, if any, and when they entered their password. */
export interface Signed {
  readonly user: User
  readonly authTime: Date
}

export class Authorization extends Context.Tag("@civicstack/core-sso/Authorization")<Authorization, {
  readonly authorize: (query: AuthorizeQuery, signedIn: Option.Option<Signed>) => Effect.Effect<AuthorizeOutcome, StoreError>
}>() {
  static readonly layer = Layer.effect(
    Authorization,
    Effect.gen(function*() {
      const { settings, store } = yield* SsoParts

      const clientOf = (query: AuthorizeQuery) =>
        Effect.gen(function*() {
          const clientId = single(query, "client_id")
          if (clientId === undefined || clientId === "repeated" || !isSecretShaped(clientId)) {
            return { message: "The application that sent you here is not known (its client_id is missing or wrong)." }
          }
          const application = yield* store.applicationByClientIdHash(hashSecret(clientId))
          if (Option.isNone(application) || application.value.retired) {
            return { message: "The application that sent you here is not known (its client_id is missing or wrong)." }
          }
          const redirectUri = single(query, "redirect_uri")
          if (redirectUri === undefined || redirectUri === "repeated" ||
            !isRegisteredRedirect(application.value.redirectUris, redirectUri)) {
            return { message: `The address ${application.value.name} asked to send you back to is not registered for it.` }
          }
          return { application: application.value, redirectUri }
        })

      return {
        authorize: (query, signedIn) =>
          Effect.gen(function*() {
            const client = yield* clientOf(query)
            if ("message" in client) return { _tag: "ErrorPage", message: client.message } as const
            const { application, redirectUri } = client
            const state = single(query, "state")
            const back = (params: Record<string, string | undefined>): AuthorizeOutcome => ({
              _tag: "Redirect",
              location: redirectWith(redirectUri, { ...params, state: state === "repeated" ? undefined : state })
            })
            const invalid = (description: string) => back({ error: "invalid_request", error_description: description })
            const repeated = Object.entries(query).find(([, value]) => typeof value !== "string")
            if (repeated !== undefined) return invalid(`The ${repeated[0]} parameter is repeated`)
            if (state === undefined || state === "") return invalid("The state parameter is required")
            const responseType = single(query, "response_type")
            if (responseType === undefined) return invalid("The response_type parameter is required")
            if (responseType !== "code") {
              return back({ error: "unsupported_response_type", error_description: "The response_type must be code" })
            }
            const challenge = single(query, "code_challenge") as string | undefined
            const method = single(query, "code_challenge_method") as string | undefined
            if (challenge === undefined) {
              if (method !== undefined) return invalid("A code_challenge_method was sent without a code_challenge")
              if (application.requirePkce) return invalid("This application must send a PKCE code_challenge (S256)")
            } else {
              if (method !== "S256") return invalid("The code_challenge_method must be S256")
              if (!isCodeChallenge(challenge)) return invalid("The code_challenge is not an S256 challenge")
            }
            const scopes = (single(query, "scope") as string | undefined ?? "").split(" ").filter((scope) => scope !== "")
            const unsupported = scopes.filter((scope) => !(SUPPORTED_SCOPES as ReadonlyArray<string>).includes(scope))
            if (unsupported.length > 0) {
              return back({ error: "invalid_scope", error_description: `Unsupported scope: ${unsupported.join(" ")}` })
            }
            if (Option.isNone(signedIn)) return { _tag: "SignInRequired", application } as const
            const { authTime, user } = signedIn.value
            const problem = accessProblem(user, application, yield* permissionsOn(store, user.uid, application.id))
            if (problem !== undefined) return { _tag: "NoAccess", application, user, reason: problem } as const
            if ((yield* twoStepRequired(store, user.uid, application)) && !(yield* hasTwoStep(store, user.uid))) {
              return { _tag: "TwoStepSetUpRequired", application } as const
            }
            const at = yield* now
            const code = newSecret()
            yield* store.insertGrant({
              codeHash: hashSecret(code),
              applicationId: application.id,
              userUid: user.uid,
              redirectUri,
              codeChallenge: challenge ?? null,
              scopes: [...new Set(scopes)],
              nonce: single(query, "nonce") as string | undefined ?? null,
              authTime,
              createdAt: at,
              expiresAt: new Date(at.getTime() + Duration.toMillis(settings.codeLifetime)),
              usedAt: null
            })
            return back({ code, iss: settings.issuer })
          })
      }
    })
  )
}

const single = (query: AuthorizeQuery, name: string): string | undefined | "repeated" => {
  const value = query[name]
  return typeof value === "string" ? value : value === undefined ? undefined : "repeated"
}

