import { SIGNATURE_HEADER_LOWERCASE } from "@civicstack/sdk-linkcheck"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Deferred, Effect, Schema, type Scope } from "effect"
import { createServer } from "node:http"
import { BenchError, failWith } from "../benchError"

export interface ArrivedWebhook {
  /** `Clock` time when the webhook's request arrived, before its body was read. */
  readonly arrivedAt: number
  readonly body: Uint8Array
  readonly signature: string | undefined
}

/** The measuring process's HTTP server: the webhook receiver, and the page of links that linkinator crawls. */
export interface Receiver {
  /** A webhook URL for one run, and the first webhook that arrives on it. */
  readonly expectWebhook: (run: string) => Effect.Effect<{
    readonly url: string
    readonly arrival: Deferred.Deferred<ArrivedWebhook>
  }>
  readonly linksPageUrl: string
}

const RunParams = Schema.Struct({ run: Schema.String })

const linksPage = (uris: ReadonlyArray<string>) =>
  [
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>Links</title></head><body><ul>",
    ...uris.map((uri) => `<li><a href="${uri}">${uri}</a></li>`),
    "</ul></body></html>"
  ].join("\n")

/** Serves on 127.0.0.1 for the life of the scope; `uris` are the links of the page at `linksPageUrl`. */
export const startReceiver = (uris: ReadonlyArray<string>): Effect.Effect<Receiver, BenchError, Scope.Scope> =>
  Effect.gen(function*() {
    const waiting = new Map<string, Deferred.Deferred<ArrivedWebhook>>()

    const receiveWebhook = Effect.gen(function*() {
      const arrivedAt = yield* Clock.currentTimeMillis
      const { run } = yield* HttpRouter.schemaPathParams(RunParams)
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = new Uint8Array(yield* request.arrayBuffer)
      const arrival = waiting.get(run)
      if (arrival === undefined) return HttpServerResponse.empty({ status: 404 })
      yield* Deferred.succeed(arrival, { arrivedAt, body, signature: request.headers[SIGNATURE_HEADER_LOWERCASE] })
      return HttpServerResponse.empty({ status: 204 })
    }).pipe(Effect.catchAll(() => Effect.succeed(HttpServerResponse.empty({ status: 400 }))))

    const page = linksPage(uris)
    const app = HttpRouter.empty.pipe(
      HttpRouter.post("/webhook/:run", receiveWebhook),
      HttpRouter.get("/links.html", Effect.succeed(HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8" })))
    )

    const server = yield* NodeHttpServer.make(() => createServer(), { host: "127.0.0.1", port: 0 }).pipe(
      Effect.mapError(failWith("cannot start the webhook receiver"))
    )
    yield* server.serve(app)
    if (server.address._tag !== "TcpAddress") {
      return yield* new BenchError({ message: "the webhook receiver has no TCP address" })
    }
    const base = `http://127.0.0.1:${server.address.port}`

    return {
      linksPageUrl: `${base}/links.html`,
      expectWebhook: (run) =>
        Effect.map(Deferred.make<ArrivedWebhook>(), (arrival) => {
          waiting.set(run, arrival)
          return { url: `${base}/webhook/${encodeURIComponent(run)}`, arrival }
        })
    }
  })
