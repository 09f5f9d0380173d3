import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { addSsoGroups } from "../../src/api/SsoApi"
import { ssoHandlers } from "../../src/http/handlers"
import { layerSql, workers } from "../../src/layers"
import { migrate } from "../../src/migrations/index"
import type { SsoServices } from "../../src/layers"
import { MemoryOutbox } from "../../src/services/Mailer"
import { applyBootstrap, BootstrapDocument } from "../../src/services/setup"
import type { SsoParts } from "../../src/services/SsoParts"
import type { SsoSettings } from "../../src/settings"
import { layerSql as jobQueueSql, migrate as migrateJobs } from "@civicstack/jobs"
import { freePort, invalidRequestsRefused, servedOnLoopback } from "@civicstack/kit/testing"
import { PgliteClient } from "@civicstack/sql-pglite"

/** The SSO's endpoints under a host's own API identifier, as a host serves them. */
const api = addSsoGroups(HttpApi.make("testhost"))

/** The handlers served on 127.0.0.1 at `port` (0: a free one) over `service`, which stays visible to the test. */
const servedOver = <ROut, E>(service: Layer.Layer<ROut | SsoServices | SsoParts, E>, port: number) =>
  servedOnLoopback(
    HttpApiBuilder.api(api).pipe(Layer.provide(ssoHandlers(api)), Layer.provide(invalidRequestsRefused)),
    service,
    port
  )

export interface SsoHost {
  readonly url: string
  /** Runs an effect on the served SSO's services; `MemoryOutbox` holds what its workers emailed. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, SsoServices | SsoParts | MemoryOutbox>) => Promise<A>
  readonly close: () => Promise<void>
}

/** The SSO on an embedded database of its own, listening for changes as the reference server runs it. */
const onPglite = (settings: Partial<SsoSettings>) =>
  Layer.unwrapEffect(Effect.map(PgliteClient.PgliteClient, ({ listen }) =>
    layerSql({ ...settings, listen }).pipe(Layer.provide(jobQueueSql({ listen }))))).pipe(
      Layer.provide(Layer.effectDiscard(Effect.zipRight(migrateJobs, migrate))),
      Layer.provide(PgliteClient.layer({}))
    )

/** The service with its workers running, emailing into a `MemoryOutbox`. */
const withWorkers = <E>(service: Layer.Layer<SsoServices | SsoParts, E>) =>
  Layer.mergeAll(service, MemoryOutbox.layer, workers.pipe(Layer.provide(service), Layer.provide(MemoryOutbox.layer)))

/**
 * The SSO on PGlite, served over HTTP in this process, with `bootstrap` (a bootstrap file's document) applied first.
 * With `issuerIsHost` its issuer is its own address, for clients that discover it there; with `workers` its workers
 * run (pushes, and emails into the `MemoryOutbox`).
 */
export const startSsoHost = async (options: {
  readonly bootstrap?: unknown
  readonly issuerIsHost?: boolean
  readonly workers?: boolean
  readonly settings?: Partial<SsoSettings>
} = {}): Promise<SsoHost> => {
  const port = options.issuerIsHost === true ? await freePort() : 0
  const issuer = options.issuerIsHost === true ? { issuer: `http://127.0.0.1:${port}` } : {}
  const scope = Effect.runSync(Scope.make())
  const service = onPglite({ ...issuer, ...options.settings })
  const context = await Effect.runPromise(
    Layer.buildWithScope(servedOver(options.workers === true ? withWorkers(service) : Layer.merge(service, MemoryOutbox.layer), port), scope)
  )
  const run = <A, E>(effect: Effect.Effect<A, E, SsoServices | SsoParts | MemoryOutbox>) =>
    Effect.runPromise(Effect.provide(effect, context))
  if (options.bootstrap !== undefined) {
    await run(Effect.flatMap(Schema.decodeUnknown(BootstrapDocument)(options.bootstrap), applyBootstrap))
  }
  const address = Context.get(context, HttpServer.HttpServer).address
  return {
    url: `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`,
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
