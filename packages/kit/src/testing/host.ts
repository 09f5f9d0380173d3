import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { invalidRequestBody } from "../invalidRequest"

/**
 * What a host (apps/server's request guard) answers for a request the contract's schemas refuse before any handler
 * runs: 400 with the invalid-request envelope. A core's own HTTP tests serve their handlers behind it.
 */
export const invalidRequestsRefused = HttpApiBuilder.middleware(Effect.succeed((app) =>
  app.pipe(Effect.catchAllCause((cause) => {
    const error: unknown = Cause.squash(cause)
    return error instanceof HttpApiDecodeError
      ? Effect.succeed(HttpServerResponse.unsafeJson(invalidRequestBody(error), { status: 400 }))
      : Effect.failCause(cause)
  }))
))

/** `api` served on 127.0.0.1 at `port` (0: a free one) over `service`, which stays visible to the test. */
export const servedOnLoopback = <E, R, ROut, E2, R2>(
  api: Layer.Layer<HttpApi.Api, E, R>,
  service: Layer.Layer<ROut, E2, R2>,
  port = 0
) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(api),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port })),
    Layer.provideMerge(service)
  )

/** The served host's base URL, e.g. `http://127.0.0.1:41234`. */
export const baseUrl = HttpServer.addressFormattedWith(Effect.succeed)
