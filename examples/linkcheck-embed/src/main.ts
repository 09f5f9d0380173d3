import * as Linkcheck from "@civicstack/core-linkcheck"
import type { Batch, Link } from "@civicstack/core-linkcheck"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import { startDemoSites } from "./demoSites"

// The whole service in memory, with its workers (the scheduler that runs checks, the webhook sender, the cleanup).
// The demo sites listen on 127.0.0.1, and the checker refuses loopback and private addresses by default so that a
// submitted link cannot make it probe the host's own network: allow them only for local tests and intranets.
// In production: Linkcheck.layerSql() over an SqlClient and the jobs package's layerSql, after Linkcheck.migrate.
const LinkcheckLive = Linkcheck.workers.pipe(Layer.provideMerge(Linkcheck.layerMemory({ allowPrivateAddresses: true })))

const waitForCompletion = (batchId: number) =>
  Effect.flatMap(Linkcheck.LinkChecker, (linkChecker) =>
    linkChecker.getBatch(batchId, "every batch").pipe(
      Effect.delay("100 millis"),
      Effect.repeat({ until: (batch) => batch.completedAt !== null }),
      Effect.timeout("1 minute")
    ))

const describeLink = (link: Link) => {
  const messages = [...link.danger, ...link.errors, ...link.warnings].join(" ")
  const problem = link.problemSummary === null ? "" : `  ${link.problemSummary}: ${messages}`
  const fix = link.suggestedFix ? `\n        fix: ${link.suggestedFix}` : ""
  return `${link.status.padEnd(7)} ${link.uri}${problem}${fix}`
}

const describeTotals = ({ totals }: Batch) =>
  `${totals.links} links: ${totals.ok} ok, ${totals.caution} caution, ${totals.broken} broken`

const program = Effect.gen(function*() {
  const { newSite, oldSite } = yield* startDemoSites
  const linkChecker = yield* Linkcheck.LinkChecker

  const { batch } = yield* linkChecker.createBatch({
    uris: [`${newSite}/guidance`, `${newSite}/missing-page`, `${oldSite}/guidance`, "mailto:help@example.org"]
  })
  yield* Console.log(`Batch ${batch.id} created with ${batch.totals.links} links`)

  const report = yield* waitForCompletion(batch.id)
  yield* Effect.forEach(report.links, (link) => Console.log(describeLink(link)), { discard: true })
  yield* Console.log(describeTotals(report))
}).pipe(Effect.scoped, Effect.provide(LinkcheckLive))

NodeRuntime.runMain(program)
