import { Command, type CommandExecutor, type FileSystem, type HttpClient } from "@effect/platform"
import { Effect, Schema, Stream } from "effect"
import { fileURLToPath } from "node:url"
import { failWith } from "../benchError"
import { followOutput, unlessExited } from "./childOutput"
import type { Fleet } from "./fleet"
import { LinkinatorOutcome, linkinatorReadyLine, linkinatorResultPrefix } from "./linkinatorProtocol"
import { countOfKind, hopCount, inOrderIdealMs, type Limits, lowerBoundMs, type PlannedLink, plannedLatencyMs } from "./linkPlan"
import { observe } from "./observe"
import type { Receiver } from "./receiver"
import { notMeasured, type RunIdentity, runLabel, type RunResult } from "./runResult"

const linkinatorEntry = fileURLToPath(new URL("./linkinatorMain.ts", import.meta.url))

export interface LinkinatorRunInput {
  /** The round of run 2. */
  readonly round: number
  readonly concurrency: number
  readonly timeoutMs: number
  readonly links: ReadonlyArray<PlannedLink>
  readonly fleet: Fleet
  readonly receiver: Receiver
}

const measure = (input: LinkinatorRunInput, identity: RunIdentity) =>
  Effect.gen(function*() {
    const child = yield* Command.make(
      process.execPath,
      ...process.execArgv,
      linkinatorEntry,
      `--page=${input.receiver.linksPageUrl}`,
      `--concurrency=${input.concurrency}`,
      `--timeout=${input.timeoutMs}`
    ).pipe(Command.start, Effect.mapError(failWith("cannot start linkinator's process")))
    const output = yield* followOutput(child, "linkinator", [linkinatorReadyLine, linkinatorResultPrefix])
    yield* unlessExited(output, output.line(linkinatorReadyLine), "ready line from linkinator", "60 seconds")

    const links = input.links.length
    const notFound = countOfKind(input.links, "notFound")
    // A HEAD per link and per redirect's target, and a GET again after each 404's HEAD.
    const expectedRequests = hopCount(input.links) + notFound
    const start = Stream.run(Stream.encodeText(Stream.make("go\n")), child.stdin).pipe(
      Effect.mapError(failWith("cannot start linkinator's check"))
    )
    const { observed, value: outcome } = yield* observe(
      `${runLabel(identity)}, linkinator`,
      input.fleet,
      expectedRequests,
      start.pipe(
        Effect.zipRight(unlessExited(output, output.line(linkinatorResultPrefix), "result from linkinator", "10 minutes")),
        Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(LinkinatorOutcome))),
        Effect.mapError(failWith("linkinator did not report a result"))
      )
    )
    const problems = [
      outcome.results === links + 1 ? undefined : `${outcome.results} results, not ${links} links + the page`,
      outcome.ok === links + 1 - notFound && outcome.broken === notFound && outcome.skipped === 0
        ? undefined
        : `ok/broken/skipped ${outcome.ok}/${outcome.broken}/${outcome.skipped}, planned ${links + 1 - notFound}/${notFound}/0`,
      observed.fleet.unexpected === 0 ? undefined : `${observed.fleet.unexpected} requests for unknown paths`,
      observed.fleet.requests === expectedRequests
        ? undefined
        : `fleet received ${observed.fleet.requests} requests, not ${expectedRequests}`
    ].filter((problem) => problem !== undefined)
    return {
      ...identity,
      ...observed,
      _tag: "Measured" as const,
      wallMs: outcome.elapsedMs,
      submitMs: null,
      toFirstRequestMs: null,
      lastResponseToWebhookMs: null,
      firstWebhookMs: null,
      peakRssBytes: outcome.peakRssBytes,
      startRssBytes: outcome.startRssBytes,
      runPeakRssBytes: outcome.checkPeakRssBytes,
      cpuMs: outcome.cpuMs,
      databaseCpuMs: null,
      problems
    }
  })

/**
 * linkinator in a process of its own, checking the receiver's page of every link: `check` without recursion at the
 * run's global concurrency, timed from the call to its result. Anything that stops it is reported as not measured.
 */
export const runLinkinator = (
  input: LinkinatorRunInput
): Effect.Effect<RunResult, never, FileSystem.FileSystem | CommandExecutor.CommandExecutor | HttpClient.HttpClient> => {
  const limits: Limits = { global: input.concurrency, perHost: Number.POSITIVE_INFINITY }
  const identity: RunIdentity = {
    run: 2,
    round: input.round,
    system: "linkinator",
    backend: null,
    limits,
    batches: 1,
    links: input.links.length,
    lowerBoundMs: lowerBoundMs(input.links, limits),
    inOrderIdealMs: inOrderIdealMs(input.links, limits),
    plannedLatencyMs: plannedLatencyMs(input.links)
  }
  return Effect.scoped(measure(input, identity)).pipe(Effect.catchAllCause((cause) => notMeasured(identity, cause)))
}
