import { JobQueue, layerMemory as jobQueueMemory } from "@civicstack/jobs"
import { keepRunning } from "@civicstack/kit"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { Authorization } from "./services/Authorization"
import { Directory } from "./services/Directory"
import { EmailLinks } from "./services/EmailLinks"
import type { Mailer } from "./services/Mailer"
import { makeIdTokens } from "./services/idTokens"
import { OAuthServer } from "./services/OAuthServer"
import { Passwords } from "./services/Passwords"
import { PushTransport } from "./services/PushTransport"
import { SignIn } from "./services/SignIn"
import { SsoParts } from "./services/SsoParts"
import { TwoStepVerification } from "./services/TwoStep"
import type { SsoSettings } from "./settings"
import { defaultSsoSettings } from "./settings"
import { makeSealer } from "./domain/sealing"
import { resealStored, sealedStore } from "./storage/sealed"
import { SsoStore } from "./storage/SsoStore"
import { layerMemory as storeMemory } from "./storage/memory"
import { layerSql as storeSql } from "./storage/sql"
import { runEmailLinkWorker } from "./workers/emailLinkSender"
import { runPushWorker } from "./workers/pushSender"

/**
 * Seals again, under the first encryption key, the stored secrets in the clear or under an older key. Run it at start
 * after `migrate`; the reference server does, before applying its bootstrap.
 */
export const resealSecrets = Effect.flatMap(SsoParts, (parts) => parts.resealSecrets)

/** The services of one SSO. */
export type SsoServices = OAuthServer | Authorization | SignIn | Directory | TwoStepVerification | EmailLinks

const partsLayer = (settings: SsoSettings) =>
  Layer.effect(
    SsoParts,
    Effect.gen(function*() {
      const stored = yield* SsoStore
      const sealer = makeSealer(settings.encryptionKeys ?? [])
      const store = sealedStore(stored, sealer)
      return {
        settings,
        store,
        resealSecrets: resealStored(stored, sealer),
        idTokens: makeIdTokens(store),
        passwords: yield* Passwords,
        jobs: yield* JobQueue,
        pushTransport: yield* PushTransport
      }
    })
  ).pipe(Layer.provide(Layer.merge(
    Passwords.layer({ concurrency: settings.passwordHashConcurrency }),
    PushTransport.layer({
      allowPrivateAddresses: settings.allowPrivateAddresses,
      connectTimeout: settings.pushTimeout,
      responseTimeout: settings.pushTimeout,
      lookup: settings.resolver
    })
  )))

/** The services over the store and job queue the caller provides; `layerSql` and `layerMemory` are built on it. */
export const serviceOver = (
  settings: Partial<SsoSettings>
): Layer.Layer<SsoServices | SsoParts, never, SsoStore | JobQueue> =>
  Layer.mergeAll(OAuthServer.layer, Authorization.layer, SignIn.layer, TwoStepVerification.layer).pipe(
    Layer.provideMerge(Layer.provideMerge(EmailLinks.layer, Directory.layer)),
    Layer.provideMerge(partsLayer({ ...defaultSsoSettings, ...settings }))
  )

/**
 * The SSO over an `SqlClient` (PostgreSQL, or PGlite embedded) and the host's job queue. Run `migrate` first. Add
 * `workers` in the copies that should send pushes. Give the database's `listen` (e.g. `PgClient.listen`) in the
 * settings so that `GET /user.json` answers from memory, kept exact across copies by LISTEN/NOTIFY.
 */
export const layerSql = (
  settings: Partial<SsoSettings> = {}
): Layer.Layer<SsoServices | SsoParts, never, SqlClient | JobQueue> =>
  serviceOver(settings).pipe(Layer.provide(storeSql({ listen: settings.listen })))

/** The SSO in memory, with a job queue of its own: for tests, scripts and embedding without a database. */
export const layerMemory = (settings: Partial<SsoSettings> = {}): Layer.Layer<SsoServices | SsoParts> =>
  serviceOver(settings).pipe(Layer.provide(Layer.merge(storeMemory(), jobQueueMemory)))

/**
 * The background work of the SSO built by `layerSql` or `layerMemory`: the push sender, and the sender of the emails
 * with invitations and password resets, through the host's `Mailer`. They run while the layer's scope is open and are
 * restarted when they stop on a failure (the database went away).
 */
export const workers: Layer.Layer<never, never, SsoParts | Mailer> = Layer.scopedDiscard(
  Effect.gen(function*() {
    const parts = yield* SsoParts
    const context = yield* Effect.context<Mailer>()
    const options = { concurrency: parts.settings.pushConcurrency, shutdownGracePeriod: parts.settings.shutdownGracePeriod }
    const keep = <E>(name: string, worker: Effect.Effect<never, E, JobQueue | SsoParts | Mailer>) =>
      keepRunning(name, worker).pipe(
        Effect.provideService(JobQueue, parts.jobs),
        Effect.provideService(SsoParts, parts),
        Effect.provide(context),
        Effect.forkScoped
      )
    yield* keep("Sign-on push sender", runPushWorker(options))
    yield* keep("Sign-on email sender", runEmailLinkWorker({ ...options, concurrency: 2 }))
  })
)
