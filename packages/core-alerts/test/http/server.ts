import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AlertsGroup, AlertsHealthGroup } from "../../src/api/AlertsApi"
import { alertsHandlers } from "../../src/http/handlers"
import { layerOpenAccess } from "../../src/layers"
import type { Alerts } from "../../src/services/Alerts"
import type { AlertsParts } from "../../src/services/AlertsParts"

/** The alert endpoints under a host's own API identifier, as a host serves them. */
const api = HttpApi.make("testhost").add(AlertsGroup).add(AlertsHealthGroup)

/**
 * What the host (apps/server's `requestGuard`) does for input the router refuses before any handler runs (a path id
 * that is not a number, a malformed bracket query): the `{"error", "details"}` envelope with 400. Bodies never get
 * here: the handlers decode them into the contract's own 400 and 422.
 */
const hostGuard = HttpApiBuilder.middleware(Effect.succeed((app) =>
  app.pipe(Effect.catchAllCause((cause) => {
    const error: unknown = Cause.squash(cause)
    if (!(error instanceof HttpApiDecodeError)) return Effect.failCause(cause)
    const details = Object.fromEntries(error.issues.map((issue) => [issue.path.join(".") || "request", issue.message]))
    return Effect.succeed(HttpServerResponse.unsafeJson({ error: `Invalid request: ${error.message}`, details }, { status: 400 }))
  }))
))

/** The handlers served on 127.0.0.1 (a free port) over `service`, which stays visible to the test. */
export const servedOver = <ROut, E>(service: Layer.Layer<ROut | Alerts | AlertsParts, E>) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiBuilder.api(api).pipe(
      Layer.provide(alertsHandlers(api)),
      Layer.provide(hostGuard),
      Layer.provide(layerOpenAccess)
    )),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 })),
    Layer.provideMerge(service)
  )

export const baseUrl = HttpServer.addressFormattedWith(Effect.succeed)
