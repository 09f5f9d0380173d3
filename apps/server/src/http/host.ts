import { forwardedOverHttps } from "@civicstack/kit"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Cause, Deferred, Duration, Effect, Exit, FiberRef, Layer, LogLevel, Option, Runtime } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type { ServerConfig } from "../config"
import type { ServiceSlot, SlotContext } from "../services/slot"
import { recordHttpAnswer } from "../observability/metrics"
import { apiLayer, servedApi } from "./api"
import { LimitedIncomingMessage } from "./bodyLimit"
import { Draining } from "./draining"
import { makeUnexpectedAnswer } from "./errorEnvelope"
import { routeTable } from "./methods"
import { requestIdOf } from "./requestId"
import {
  answerFast,
  FastAnswers,
  fastAnswersServed,
  formAnswerFor,
  fastFormRequest,
  readBody,
  writeAnswer
} from "./fastAnswers"
import type { FastFormAnswer, FastResponse } from "./fastAnswers"

const STRICT_TRANSPORT_SECURITY = "max-age=31536000; includeSubDomains"

/** Asked often by machines watching the server: not worth a trace each. */
const isProbe = (url: string) => url.startsWith("/healthcheck/") || url === "/metrics"

/** What the host serves beside the services' APIs, as the metrics name these routes. */
const HOST_PATHS = ["/metrics", "/docs", "/docs/assets/:file", "/openapi/:document"]

/**
 * The node server. Every answer carries the request's id (`requestIdOf`), and those to requests that came over https
 * (to it, or to a trusted proxy that says so) `Strict-Transport-Security`: both set on the response when it is made,
 * so that every answer has them, fast ones too.
 */
const createNodeServer = (config: ServerConfig): Http.Server => {
  const overHttps = forwardedOverHttps(config.trustProxy)
  const { tls } = config
  class SecureTransportAnswer extends Http.ServerResponse<LimitedIncomingMessage> {
    constructor(request: LimitedIncomingMessage) {
      super(request)
      this.setHeader("x-request-id", requestIdOf(request))
      const forwardedProto = request.headers["x-forwarded-proto"]
      if (tls !== undefined || overHttps(typeof forwardedProto === "string" ? forwardedProto : undefined, request.socket.remoteAddress)) {
        this.setHeader("strict-transport-security", STRICT_TRANSPORT_SECURITY)
      }
    }
  }
  const options = { IncomingMessage: LimitedIncomingMessage, ServerResponse: SecureTransportAnswer }
  return tls === undefined
    ? Http.createServer(options)
    : Https.createServer({ ...options, cert: Fs.readFileSync(tls.certFile), key: Fs.readFileSync(tls.keyFile) })
}

/** Every JSON answer says its charset; the library's own say plain `application/json`. */
const jsonWithCharset = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(
    response.body._tag === "Uint8Array" && response.body.contentType === "application/json"
      ? HttpServerResponse.setBody(response, HttpBody.uint8Array(response.body.body, "application/json; charset=utf-8"))
      : response
  )
)

/** The registry of fast answers, with those of `slots` registered over the slots' service layers. */
const fastAnswersLayer = (slots: ReadonlyArray<ServiceSlot>) =>
  slots.reduce<Layer.Layer<never, never, SlotContext | FastAnswers>>(
    (all, slot) => Layer.merge(all, slot.fastAnswers),
    Layer.empty
  ).pipe(Layer.provideMerge(FastAnswers.layer))

/**
 * The HTTP host, serving the health checks and the routes of `slots`. On shutdown it stops accepting connections,
 * keeps answering the requests that arrive on open ones (with `connection: close`, so clients go elsewhere next),
 * closes idle keep-alive connections, and cuts those still open after the grace period; only then does it stop
 * serving.
 */
export const httpHostLayer = (config: ServerConfig, slots: ReadonlyArray<ServiceSlot>) => {
  const server = createNodeServer(config)
  const tracing = config.tracing !== undefined
  const listening = NodeHttpServer.layer(() => server, { port: config.port, host: config.host })

  const { templateOf } = routeTable(servedApi(slots), HOST_PATHS)
  const routeOf = (url: string) => templateOf(url.split("?", 1)[0]!)
  const recordAnswer = (request: Http.IncomingMessage, status: number, startedAt: number) => {
    if (config.metrics) {
      recordHttpAnswer(request.method ?? "GET", routeOf(request.url ?? "/"), status, (performance.now() - startedAt) / 1000)
    }
  }

  /** Counts each answer by method, route template and status, with its latency, once the answer is made. */
  const measured = (app: HttpApp.Default) =>
    Effect.suspend(() => {
      const startedAt = performance.now()
      return Effect.zipRight(
        HttpApp.appendPreResponseHandler((request, response) =>
          Effect.sync(() => {
            recordHttpAnswer(request.method, routeOf(request.url), response.status, (performance.now() - startedAt) / 1000)
            return response
          })
        ),
        app
      )
    })

  /** Every log line written while serving the request names its id, the access log's line included. */
  const withRequestId = (app: HttpApp.Default) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.annotateLogs(app, "request_id", requestIdOf(NodeHttpServerRequest.toIncomingMessage(request))))

  const serving = HttpApiBuilder.serve((app) =>
    withRequestId(HttpMiddleware.logger(Effect.zipRight(jsonWithCharset, config.metrics ? measured(app) : app)))
  ).pipe(
    // The router would otherwise collapse "//" in the whole URL, query included: `?uri=https://x` became `https:/x`.
    Layer.provide(HttpRouter.setRouterConfig({ ignoreDuplicateSlashes: false })),
    // without tracing the request's span and its attributes would be made for nothing; probes are not traced
    HttpMiddleware.withTracerDisabledWhen((request) => !tracing || isProbe(request.url)),
    HttpMiddleware.withSpanNameGenerator((request) => `${request.method} ${routeOf(request.url) ?? "unmatched"}`)
  )

  /**
   * When draining begins the server stops accepting, answers new requests with `connection: close`, and closes
   * connections as they become idle. Acquired after `serving`, so its finaliser, which waits for the open
   * connections to end (or cuts them after the grace period), runs while requests are still answered.
   */
  const drainOnShutdown = Layer.scopedDiscard(Effect.gen(function*() {
    const draining = yield* Draining
    const allClosed = yield* Deferred.make<void>()
    // Once stopping, every answer closes its connection, so clients go elsewhere for their next request.
    const closeAfterAnswer = (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
      response.shouldKeepAlive = false
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => server.off("request", closeAfterAnswer)))
    yield* draining.onBegin(Effect.gen(function*() {
      yield* Effect.logInfo("Shutting down: no new connections; in-flight requests finish")
      server.prependListener("request", closeAfterAnswer)
      // a keep-alive connection whose request was in flight becomes idle once answered
      const closeIdle = setInterval(() => server.closeIdleConnections(), 100).unref()
      server.close(() => {
        clearInterval(closeIdle)
        Deferred.unsafeDone(allClosed, Exit.void)
      })
      server.closeIdleConnections()
    }))
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* draining.begin
        // a finaliser runs uninterruptibly: without `interruptible` the timeout could not stop the wait, and a
        // connection that never ends (an upload dripping its body) would hold the shutdown for ever
        const closed = yield* Effect.interruptible(Deferred.await(allClosed)).pipe(
          Effect.timeoutOption(Duration.seconds(config.shutdownGraceSeconds))
        )
        if (Option.isNone(closed)) server.closeAllConnections()
      })
    )
  }))

  /**
   * Requests a slot can answer from memory, or from a small form body with the code of their route, are answered
   * before the HTTP stack sees them, with the stack's access log line. Not while draining: those answers must close
   * their connections, which the stack's path does.
   */
  const fastPath = Layer.scopedDiscard(Effect.gen(function*() {
    // traced, every request goes through the stack, which makes its span
    if (tracing) return
    const answers = yield* (yield* FastAnswers).all
    const forms = new Map((yield* (yield* FastAnswers).forms).flatMap((form) => form.paths.map((path) => [path, form])))
    if (answers.length === 0 && forms.size === 0) return
    const draining = yield* Draining
    const unexpectedAnswer = yield* makeUnexpectedAnswer
    const runtime = yield* Effect.runtime<never>()
    const runFork = Runtime.runFork(runtime)
    const logsAnswers = LogLevel.greaterThanEqual(LogLevel.Info, yield* FiberRef.get(FiberRef.currentMinimumLogLevel))
    const logAnswer = (request: Http.IncomingMessage, status: number, startedAt: number) => {
      fastAnswersServed.unsafeUpdate(1, [])
      recordAnswer(request, status, startedAt)
      if (!logsAnswers) return
      Runtime.runSync(runtime)(
        Effect.log("Sent HTTP response").pipe(
          Effect.annotateLogs({
            "http.method": request.method ?? "GET",
            "http.url": request.url ?? "/",
            "http.status": status,
            request_id: requestIdOf(request)
          })
        )
      )
    }
    let drainingBegan = false
    yield* draining.onBegin(Effect.sync(() => {
      drainingBegan = true
    }))

    /** As the stack does, a client that goes away before its answer interrupts the work done for it. */
    const answerForm = (
      form: FastFormAnswer,
      request: Http.IncomingMessage,
      response: Http.ServerResponse,
      startedAt: number
    ) =>
      readBody(request, (body) => {
        const method = request.method ?? "POST"
        const url = request.url ?? "/"
        // suspended, so that anything thrown while the answer is made is a defect, answered as the stack would
        const fiber = runFork(Effect.suspend(() => form.answer(fastFormRequest(request, body))).pipe(
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause)
              ? Effect.failCause(cause)
              : Effect.map(unexpectedAnswer({ method, url, requestId: requestIdOf(request) }, cause), (answer): FastResponse => ({
                status: answer.status,
                headers: { ...answer.headers, "content-type": "application/json; charset=utf-8" },
                body: JSON.stringify(answer.body)
              }))
          )
        ))
        fiber.addObserver((exit) => {
          if (response.destroyed) return
          // only an interruption fails here: the host is stopping, and the connection is not left hanging
          if (Exit.isFailure(exit)) return void response.destroy()
          // draining began while it was answered: the client goes elsewhere next
          if (drainingBegan) response.shouldKeepAlive = false
          writeAnswer(response, exit.value)
          logAnswer(request, exit.value.status, startedAt)
        })
        response.on("close", () => {
          if (!response.writableEnded) fiber.unsafeInterruptAsFork(fiber.id())
        })
      })

    const emit = server.emit
    server.emit = function(this: Http.Server, event: string, ...args: Array<any>) {
      if (event === "request" && !drainingBegan) {
        const startedAt = performance.now()
        const answered = answerFast(answers, args[0], args[1])
        if (answered !== undefined) {
          logAnswer(args[0], answered.status, startedAt)
          return true
        }
        const form = forms.size === 0 ? undefined : formAnswerFor(forms, args[0])
        if (form !== undefined) {
          answerForm(form, args[0], args[1], startedAt)
          return true
        }
      }
      return Reflect.apply(emit, this, [event, ...args])
    } as typeof server.emit
    yield* Effect.addFinalizer(() => Effect.sync(() => {
      server.emit = emit
    }))
  }))

  const announce = Layer.effectDiscard(
    HttpServer.addressFormattedWith((address) =>
      Effect.logInfo("Listening").pipe(Effect.annotateLogs({ address: address.replace("0.0.0.0", "localhost") }))
    )
  )

  // The API and the services behind it are built before the port opens: a connection accepted earlier would wait for
  // an answer until they were ready.
  return Layer.mergeAll(serving.pipe(Layer.flatMap(() => drainOnShutdown)), announce, fastPath).pipe(
    Layer.provideMerge(listening),
    Layer.provide(apiLayer(slots, { metrics: config.metrics })),
    Layer.provide(fastAnswersLayer(slots))
  )
}
