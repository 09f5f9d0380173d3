/**
 * linkinator's own process, started by the link checking bench
 * (`linkinatorMain.ts --page=<url> --concurrency=<n> --timeout=<ms>`), so that its memory and CPU are its own.
 * Once loaded it writes a ready line and waits for its stdin to end; then it checks the page and every link on it,
 * without recursing, and writes its outcome as one line.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Clock, Console, Effect, Schema } from "effect"
import { check, LinkState } from "linkinator"
import { parseArgs } from "node:util"
import { failWith } from "../benchError"
import { LinkinatorOutcome, linkinatorReadyLine, linkinatorResultPrefix } from "./linkinatorProtocol"
import { peakRssBytes, resetPeakRss, rssBytes } from "./procfs"

const { values: options } = parseArgs({
  options: { page: { type: "string" }, concurrency: { type: "string" }, timeout: { type: "string" } },
  strict: true
})

const Options = Schema.Struct({
  page: Schema.String,
  concurrency: Schema.NumberFromString.pipe(Schema.int(), Schema.positive()),
  timeout: Schema.NumberFromString.pipe(Schema.int(), Schema.positive())
})

const untilStdinEnds = Effect.async<void>((resume) => {
  process.stdin.once("end", () => resume(Effect.void))
  process.stdin.resume()
})

const program = Effect.gen(function*() {
  const { concurrency, page, timeout } = yield* Schema.decodeUnknown(Options)(options)
  yield* Console.log(linkinatorReadyLine)
  yield* untilStdinEnds
  const loadedPeakRss = yield* peakRssBytes(process.pid)
  const startRss = yield* rssBytes(process.pid)
  yield* resetPeakRss(process.pid)
  const cpuBefore = process.cpuUsage()
  const startedAt = yield* Clock.currentTimeMillis
  const result = yield* Effect.tryPromise({
    try: () =>
      check({
        path: page,
        recurse: false,
        concurrency,
        timeout,
        linksToSkip: [],
        retry: false,
        retryErrors: false
      }),
    catch: failWith("linkinator failed")
  })
  const elapsedMs = (yield* Clock.currentTimeMillis) - startedAt
  const cpu = process.cpuUsage(cpuBefore)
  const checkPeakRss = yield* peakRssBytes(process.pid)
  const inState = (state: LinkState) => result.links.filter((link) => link.state === state).length
  const outcome = yield* Schema.encode(Schema.parseJson(LinkinatorOutcome))({
    elapsedMs,
    results: result.links.length,
    ok: inState(LinkState.OK),
    broken: inState(LinkState.BROKEN),
    skipped: inState(LinkState.SKIPPED),
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssBytes: Math.max(loadedPeakRss, checkPeakRss),
    startRssBytes: startRss,
    checkPeakRssBytes: checkPeakRss
  })
  yield* Console.log(`${linkinatorResultPrefix}${outcome}`)
})

NodeRuntime.runMain(program.pipe(Effect.provide(NodeContext.layer)))
