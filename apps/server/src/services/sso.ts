import * as Alerts from "@civicstack/core-alerts"
import * as Sso from "@civicstack/core-sso"
import { JobQueue } from "@civicstack/jobs"
import { DatabaseNotifications } from "../database"
import { addSsoGroups } from "@civicstack/core-sso/api"
import type { AccessCheck } from "@civicstack/kit/access"
import { Forbidden, Unauthenticated } from "@civicstack/kit/access"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Context } from "effect"
import { Config, Duration, Effect, Layer, Option, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import type { ServerConfig } from "../config"
import { FastAnswers } from "../http/fastAnswers"
import { keptSecret } from "./keptSecret"
import { ReadinessSections } from "../http/readiness"
import type { ServiceSettings, ServiceSlot, SlotContext } from "./slot"

/** The SSO's section of the server's configuration, read under `SSO_`. */
export const ssoSettings: ServiceSettings<"sso", { readonly sso: Config.Config.Success<typeof Sso.ssoConfig> }> = {
  name: "sso",
  config: () => Config.all({ sso: Sso.ssoConfig }),
  secretVariables: ["SSO_ENCRYPTION_KEY"],
  productionProblems: ({ sso }) => [
    ...Option.exists(sso.issuer, (issuer) => issuer.startsWith("https:"))
      ? []
      : ["SSO_ISSUER must be the single sign-on's https:// URL when NODE_ENV=production (the issuer of its tokens)"],
    ...Option.isSome(sso.encryptionKeys)
      ? []
      : ["SSO_ENCRYPTION_KEY must be set when NODE_ENV=production (the key its signing keys, push tokens and two-step secrets are sealed under)"]
  ]
}

/** The SSO's endpoints as this server serves them, under the server's API identifier. */
const api = addSsoGroups(HttpApi.make("civicstack"))

export class BootstrapFileError extends Schema.TaggedError<BootstrapFileError>()("BootstrapFileError", {
  file: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `CIVICSTACK_BOOTSTRAP ${this.file}: ${this.problem}`
  }
}

const decodeBootstrap = Schema.decodeUnknown(Schema.parseJson(Sso.BootstrapDocument), { errors: "all" })

const readBootstrap = (file: string) =>
  Effect.tryPromise({
    try: () => Fs.readFile(file, "utf8"),
    catch: (error) => new BootstrapFileError({ file, problem: `cannot be read: ${String(error)}` })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.mapError(decodeBootstrap(text), (error) => new BootstrapFileError({ file, problem: error.message }))
    )
  )

/** The secrets kept so far, or none when the file is missing or not ours to read. */
const keptSecrets = (file: string) =>
  Fs.readFile(file, "utf8").then(
    (text): ReadonlyArray<unknown> => {
      const kept: unknown = JSON.parse(text)
      return typeof kept === "object" && kept !== null && "secrets" in kept && Array.isArray(kept.secrets) ? kept.secrets : []
    },
    () => []
  )

/**
 * Secrets made at start are shown once, on stderr beside the JSON log, and added to a file only its owner can read
 * (`DATA_DIR/first-run.json`).
 */
const announce = (config: ServerConfig, heading: string, secrets: ReadonlyArray<Sso.NewSecret>) =>
  Effect.gen(function*() {
    if (secrets.length === 0) return
    const file = Path.resolve(config.dataDir, "first-run.json")
    yield* Effect.promise(async () => {
      await Fs.mkdir(config.dataDir, { recursive: true })
      const all = [...await keptSecrets(file), ...secrets]
      await Fs.writeFile(file, `${JSON.stringify({ secrets: all }, null, 2)}\n`, { mode: 0o600 })
      await Fs.chmod(file, 0o600)
    })
    const lines = secrets.map(({ value, what }) => `  ${what}: ${value}`)
    yield* Effect.sync(() => process.stderr.write(`\n${heading} (also in ${file}, shown only now):\n${lines.join("\n")}\n\n`))
    yield* Effect.logInfo(heading).pipe(Effect.annotateLogs({ file, secrets: secrets.map(({ what }) => what) }))
  })

/** `SSO_ISSUER`, or this host on its port when unset (development: production requires the setting). */
export const ssoIssuer = (config: ServerConfig) =>
  Option.getOrElse(config.sso.issuer, () => `http://localhost:${config.port}`)

/**
 * The single sign-on's services over this copy's database: one layer, shared by the SSO's routes, workers and setup
 * and by the other services' access checks.
 */
export const ssoServiceLayer = (config: ServerConfig) => {
  const issuer = ssoIssuer(config)
  const settings = {
    ...config.sso,
    issuer,
    secureCookies: config.tls !== undefined || issuer.startsWith("https:") || config.production,
    trustProxy: config.trustProxy,
    production: config.production,
    shutdownGracePeriod: Duration.seconds(config.shutdownGraceSeconds)
  }
  return Layer.unwrapEffect(Effect.gen(function*() {
    const { listen } = yield* DatabaseNotifications
    const encryptionKeys = Option.isSome(config.sso.encryptionKeys)
      ? config.sso.encryptionKeys.value
      : [new Uint8Array(Buffer.from(yield* keptSecret(
        config.dataDir,
        "sso-encryption-key",
        "base64",
        "Single sign-on: its signing keys, push tokens and two-step secrets are sealed under a key made now and kept in the data directory; set SSO_ENCRYPTION_KEY to keep it elsewhere"
      ), "base64"))]
    return Sso.layerSql({ ...settings, encryptionKeys, listen })
  }))
}

/**
 * The sign-on's emails (invitations, password resets) leave through the email provider the alerts use, with the same
 * `EMAIL_PROVIDER` settings; the `log` provider writes them to `DATA_DIR/outbox`.
 */
const ssoMailer = (config: ServerConfig) =>
  Layer.effect(
    Sso.Mailer,
    Effect.map(Alerts.EmailProvider, (provider) => ({
      send: (message: Sso.MailMessage) =>
        provider.send({ id: message.id, address: message.to, subject: message.subject, body: message.body }).pipe(
          Effect.mapError((failure) =>
            new Sso.MailNotSent({ reason: failure.reason, permanent: failure._tag === "PermanentDeliveryFailure" })
          )
        )
    }))
  ).pipe(Layer.provide(Alerts.emailProviderLayer(config.email.provider)))

/** The single sign-on of this copy, over the service layer of `ssoServiceLayer`. */
export const ssoSlot = (config: ServerConfig, service: ReturnType<typeof ssoServiceLayer>): ServiceSlot => {
  const prepare = Effect.gen(function*() {
    const resealed = yield* Sso.resealSecrets
    if (resealed > 0) yield* Effect.logInfo("Single sign-on: stored secrets sealed under the current encryption key").pipe(Effect.annotateLogs({ resealed }))
    if (Option.isSome(config.bootstrapFile)) {
      const document = yield* readBootstrap(config.bootstrapFile.value)
      const secrets = yield* Sso.applyBootstrap(document)
      yield* announce(config, "Bootstrap file applied; new secrets", secrets)
      return
    }
    const created = yield* Sso.firstStart
    if (Option.isSome(created)) yield* announce(config, "First start: sign-on accounts created", created.value)
  })
  return {
    name: "sso",
    title: "civicstack single sign-on",
    // its accounts and tokens guard every other service's API
    preparedByEveryCopy: true,
    api,
    migrate: Sso.migrate,
    prepare: Effect.provide(prepare, service),
    routes: Sso.ssoHandlers(api).pipe(Layer.provide(service)),
    workers: Sso.workers.pipe(Layer.provide(service), Layer.provide(ssoMailer(config))),
    fastAnswers: Layer.effectDiscard(Effect.gen(function*() {
      const oauth = yield* Sso.OAuthServer
      const fastAnswers = yield* FastAnswers
      const tokenAnswer = yield* Sso.tokenEndpoint
      yield* fastAnswers.addForm({
        paths: Sso.TOKEN_PATHS,
        answer: (request) =>
          Effect.map(tokenAnswer(request), ({ body, headers, status }) => ({
            status,
            headers: { ...headers, "content-type": "application/json; charset=utf-8" },
            body
          }))
      })
      yield* fastAnswers.add((request) => {
        if (request.method !== "GET" || request.pathname !== "/user.json") return undefined
        const clientIds = request.query.getAll("client_id")
        if (clientIds.length > 1 || [...request.query.keys()].some((name) => name !== "client_id")) return undefined
        const answer = oauth.userFromMemory(request.authorization, clientIds[0])
        return answer === undefined ? undefined : {
          status: 200,
          headers: { "cache-control": "no-store", "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify(answer)
        }
      })
    })).pipe(Layer.provide(service)),
    readiness: Layer.effectDiscard(Effect.gen(function*() {
      const sections = yield* ReadinessSections
      const jobs = yield* JobQueue
      yield* sections.add("sso", Effect.map(Effect.provideService(Sso.pushWorkload, JobQueue, jobs), (pushes) => ({
        waiting_pushes: pushes.waiting,
        sending_pushes: pushes.sending,
        failed_pushes: pushes.failed,
        oldest_due_push_age_seconds: pushes.oldestDueAgeMs === null ? null : Math.round(pushes.oldestDueAgeMs / 1000)
      })))
    }))
  }
}

/** RFC 6750's challenge on a 401, which the declared error cannot carry. */
const challengeBearer = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", `Bearer realm="civicstack", error="invalid_token"`))
)

/**
 * Checks the callers of another service's API in-process, with the single sign-on of `sso` on the same database: a
 * bearer token of a user with `signin` on `application` passes; anything else is refused with 401 or 403. The raw
 * header is read, since the platform's bearer security does not check the scheme.
 */
export const callersCheckedBySso = (sso: Layer.Layer<Sso.OAuthServer, never, SlotContext>) =>
<Self>(tag: Context.Tag<Self, AccessCheck>, application: string): Layer.Layer<Self, never, SlotContext> =>
  Layer.effect(tag, Effect.gen(function*() {
    const oauth = yield* Sso.OAuthServer
    const check = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const caller = yield* oauth.caller(request.headers["authorization"], application).pipe(
        Effect.catchTags({
          InvalidToken: (refusal) =>
            Effect.zipRight(challengeBearer, Effect.fail(new Unauthenticated({ error: refusal.error_description }))),
          // the host answers 503 while the database cannot be reached
          StoreError: Effect.die
        })
      )
      if (!caller.permissions.includes(Sso.SIGNIN)) {
        return yield* Effect.fail(new Forbidden({ error: `The user may not use this API: no signin permission on ${application}` }))
      }
      return { uid: caller.user.uid, permissions: caller.permissions }
    })
    return { bearer: () => check }
  })).pipe(Layer.provide(sso))
