import {
  Checker,
  CheckSignal,
  DEFAULT_CHECKED_WITHIN_SECONDS,
  LinkChecker,
  linkCheckerLayer,
  runScheduler,
  storeLayerMemory
} from "@civicstack/core-linkcheck"
import type { BatchReport, LinkReport } from "@civicstack/core-linkcheck"
import { layerMemory as jobQueueMemory } from "@civicstack/jobs"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import { startDemoSites } from "./demoSites"

// What the link checker needs: the checker making the requests, a store and a job queue (memory here; in
// production storeLayerSql and the jobs layerSql over one SqlClient), and the signal that wakes the scheduler.
const linkcheckFoundations = Layer.mergeAll(
  // The demo sites listen on 127.0.0.1. The checker refuses loopback and private addresses by default, so that a
  // submitted link cannot make it probe the host's own network; allow them only for local tests and intranets.
  Checker.layer({ allowPrivateAddresses: true }),
  CheckSignal.layer,
  storeLayerMemory,
  jobQueueMemory
)

// The scheduler claims pending checks and runs them, in a fiber that lives as long as the layer.
const checkScheduler = Layer.scopedDiscard(Effect.forkScoped(runScheduler()))

const LinkcheckLive = Layer.merge(linkCheckerLayer, checkScheduler).pipe(Layer.provide(linkcheckFoundations))

const waitForCompletion = (batchId: number) =>
  Effect.flatMap(LinkChecker, (linkChecker) =>
    linkChecker.getBatch(batchId).pipe(
      Effect.delay("100 millis"),
      Effect.repeat({ until: (report) => report.status === "completed" }),
      Effect.timeout("1 minute")
    ))

const describeLink = (link: LinkReport) => {
  const messages = [...link.danger, ...link.errors, ...link.warnings].join(" ")
  const problem = link.problem_summary === null ? "" : `  ${link.problem_summary}: ${messages}`
  const fix = link.suggested_fix ? `\n        fix: ${link.suggested_fix}` : ""
  return `${link.status.padEnd(7)} ${link.uri}${problem}${fix}`
}

const describeTotals = ({ totals }: BatchReport) =>
  `${totals.links} links: ${totals.ok} ok, ${totals.caution} caution, ${totals.broken} broken`

const program = Effect.gen(function*() {
  const { newSite, oldSite } = yield* startDemoSites
  const linkChecker = yield* LinkChecker

  const created = yield* linkChecker.createBatch({
    uris: [`${newSite}/guidance`, `${newSite}/missing-page`, `${oldSite}/guidance`, "mailto:help@example.org"],
    checked_within: DEFAULT_CHECKED_WITHIN_SECONDS,
    priority: "high"
  })
  yield* Console.log(`Batch ${created.report.id} created with ${created.report.totals.links} links`)

  const report = yield* waitForCompletion(created.report.id)
  yield* Effect.forEach(report.links, (link) => Console.log(describeLink(link)), { discard: true })
  yield* Console.log(describeTotals(report))
}).pipe(Effect.scoped, Effect.provide(LinkcheckLive))

NodeRuntime.runMain(program)
