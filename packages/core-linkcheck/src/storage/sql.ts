import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { LinkcheckStore } from "./LinkcheckStore"
import { batchStatements } from "./sql/batches"
import { checkStatements } from "./sql/checks"
import { linkcheckSqlTools } from "./sql/tools"
import { webhookAttemptStatements } from "./sql/webhookAttempts"
import { workerStatements } from "./sql/workers"

const make = Effect.gen(function*() {
  const tools = yield* linkcheckSqlTools
  const checks = checkStatements(tools)
  const batches = batchStatements(tools, checks)
  const webhookAttempts = webhookAttemptStatements(tools)
  const workers = workerStatements(tools)
  return LinkcheckStore.of({
    transaction: tools.transaction,
    findCheck: checks.findCheck,
    createCheck: checks.createCheck,
    createChecks: checks.createChecks,
    createAndClaimChecks: checks.createAndClaimChecks,
    createBatch: batches.createBatch,
    createAndClaimBatch: batches.createAndClaimBatch,
    findBatch: batches.findBatch,
    findWebhookReport: batches.findWebhookReport,
    claimChecks: checks.claimChecks,
    extendClaims: checks.extendClaims,
    releaseClaims: checks.releaseClaims,
    completeChecks: batches.completeChecks,
    recordWebhookAttempt: webhookAttempts.recordWebhookAttempt,
    webhookAttempts: webhookAttempts.webhookAttempts,
    heartbeat: workers.heartbeat,
    workersOn: workers.workersOn,
    retireWorkers: workers.retireWorkers,
    workload: checks.workload,
    deleteCompletedBefore: batches.deleteCompletedBefore
  })
})

/** The store over the host's `SqlClient` (PostgreSQL or PGlite); run `migrate` first. */
export const layerSql = (): Layer.Layer<LinkcheckStore, never, SqlClient> => Layer.effect(LinkcheckStore, make)
