import * as Linkcheck from "@civicstack/core-linkcheck"
import type { Batch, Link } from "@civicstack/core-linkcheck"
import { BatchReport } from "@civicstack/core-linkcheck/api"
import { Args, Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import { Console, Duration, Effect, Layer, Schema } from "effect"
import { quietLogsOnStderr } from "./output"
import { parseServerConfig } from "../config"
import { makeProgressBar } from "./progress"

/** Checks run in this process with memory storage: no server or database needed, nothing is kept. */
const inProcessLinkcheck = Layer.unwrapEffect(
  Effect.map(Effect.suspend(() => parseServerConfig(process.env)), (config) =>
    Linkcheck.workers.pipe(
      Layer.provideMerge(Linkcheck.layerMemory({ ...config.linkcheck, shutdownGracePeriod: Duration.seconds(1) }))
    ))
)

/** Runs the uris as one batch and reports progress until every link has a result. */
const checkAll = (uris: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const linkChecker = yield* Linkcheck.LinkChecker
    const { batch } = yield* linkChecker.createBatch({ uris, checkedWithin: 0 })
    const progress = makeProgressBar(batch.totals.links, "Checking links")
    const poll = linkChecker.getBatch(batch.id, "every batch").pipe(
      Effect.tap((report) => progress.update(report.totals.links - report.totals.pending))
    )
    return yield* Effect.repeat(Effect.delay(poll, "200 millis"), { until: (report) => report.completedAt !== null })
  }).pipe(Effect.provide(Layer.merge(inProcessLinkcheck, quietLogsOnStderr)))

const describeLink = (link: Link) => {
  const problem = link.problemSummary === null ? "" : `  ${link.problemSummary}`
  const messages = [...link.danger, ...link.errors, ...link.warnings]
  return `${link.status.padEnd(7)} ${link.uri}${problem}${messages.length > 0 ? `: ${messages.join(" ")}` : ""}`
}

const encodeReport = Schema.encodeSync(BatchReport)

const printReport = (report: Batch, json: boolean) =>
  json
    ? Console.log(JSON.stringify(encodeReport(Linkcheck.batchToWire(report)), null, 2))
    : Effect.forEach(report.links, (link) => Console.log(describeLink(link)), { discard: true }).pipe(
      Effect.zipRight(Console.log(
        `${report.totals.links} links: ${report.totals.ok} ok, ${report.totals.caution} caution, ${report.totals.broken} broken`
      ))
    )

/** Exit code 1 when any link is broken, so scripts can gate on it. */
const exitCodeFor = (report: Batch) =>
  Effect.sync(() => {
    if (report.totals.broken > 0) process.exitCode = 1
  })

const json = Options.boolean("json").pipe(Options.withDescription("print the batch report as JSON"))

const check = Command.make(
  "check",
  { uris: Args.text({ name: "uri" }).pipe(Args.atLeast(1)), json },
  ({ json, uris }) =>
    checkAll(uris).pipe(Effect.tap((report) => printReport(report, json)), Effect.flatMap(exitCodeFor))
).pipe(Command.withDescription("Check links now, in this process: one line per link, a progress bar for many"))

/** The links file cannot be read or lists no links. */
class UnusableLinkFile extends Schema.TaggedError<UnusableLinkFile>()("UnusableLinkFile", { message: Schema.String }) {}

/** One link per line; blank lines and lines starting with `#` are skipped. */
const readLinkFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) =>
        new UnusableLinkFile({ message: `Cannot read links from ${file}: ${error.description ?? error.message}` })
      )
    )
    const uris = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))
    if (uris.length === 0) {
      return yield* new UnusableLinkFile({ message: `${file} has no links (one per line, # starts a comment)` })
    }
    return uris
  })

const batch = Command.make(
  "batch",
  // Any path: the command itself explains a missing file or a directory (exit code 2).
  { file: Args.path({ name: "file" }).pipe(Args.withDescription("a text file of links, one per line")), json },
  ({ file, json }) =>
    Effect.gen(function*() {
      const report = yield* checkAll(yield* readLinkFile(file))
      yield* printReport(report, json)
      yield* exitCodeFor(report)
    }).pipe(
      // Exit code 2, not 1: a script can tell a file it could not use from broken links.
      Effect.catchTag("UnusableLinkFile", (error) =>
        Console.error(error.message).pipe(Effect.zipRight(Effect.sync(() => { process.exitCode = 2 }))))
    )
).pipe(Command.withDescription(
  "Check every link in a file (one per line, # comments) as one batch; --json for scripts. " +
    "Exit code 1 when a link is broken, 2 when the file cannot be read or lists no links"
))

export const linkcheckCommand = Command.make("linkcheck").pipe(
  Command.withDescription("Link checking from the command line"),
  Command.withSubcommands([check, batch])
)
