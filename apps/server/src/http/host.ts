import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type { ServerConfig } from "../config"
import type { ServiceSlot } from "../services/slot"
import { apiLayer } from "./api"
import { Draining } from "./draining"

const createNodeServer = (tls: ServerConfig["tls"]): Http.Server =>
  tls === undefined
    ? Http.createServer()
    : Https.createServer({ cert: Fs.readFileSync(tls.certFile), key: Fs.readFileSync(tls.keyFile) })

/**
 * The HTTP host, serving the health checks and the routes of `slots`. On shutdown it stops accepting, lets in-flight requests finish, tells keep-alive clients to
 * disconnect (`connection: close`) and cuts the connections still open after the grace period.
 */
export const httpHostLayer = (config: ServerConfig, slots: ReadonlyArray<ServiceSlot>) => {
  const server = createNodeServer(config.tls)
  const listening = NodeHttpServer.layer(() => server, { port: config.port, host: config.host })

  const disconnectClientsOnShutdown = Layer.scopedDiscard(Effect.gen(function*() {
    const draining = yield* Draining
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* draining.begin
        yield* Effect.logInfo("Shutting down: no new connections; in-flight requests finish")
        server.closeIdleConnections()
        const cutOff = setTimeout(() => server.closeAllConnections(), config.shutdownGraceSeconds * 1000)
        cutOff.unref()
      })
    )
  }))

  const closeKeepAliveWhileDraining = (app: HttpApp.Default) =>
    Effect.gen(function*() {
      const draining = yield* Draining
      const response = yield* app
      return (yield* draining.isDraining) ? HttpServerResponse.setHeader(response, "connection", "close") : response
    })

  const serving = HttpApiBuilder.serve((app) => HttpMiddleware.logger(closeKeepAliveWhileDraining(app))).pipe(
    Layer.provide(apiLayer(slots)),
    // The router would otherwise collapse "//" in the whole URL, query included: `?uri=https://x` became `https:/x`.
    Layer.provide(HttpRouter.setRouterConfig({ ignoreDuplicateSlashes: false }))
  )

  const announce = Layer.effectDiscard(
    HttpServer.addressFormattedWith((address) =>
      Effect.logInfo("Listening").pipe(Effect.annotateLogs({ address: address.replace("0.0.0.0", "localhost") }))
    )
  )

  return Layer.mergeAll(serving, disconnectClientsOnShutdown, announce).pipe(Layer.provideMerge(listening))
}
