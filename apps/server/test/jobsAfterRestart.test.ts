import { JobDefinition, JobQueue } from "@civicstack/jobs"
import { Duration, Effect, Either, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { databaseWithJobsLayer } from "../src/app"
import { parseServerConfig } from "../src/config"
import { startInProcessServer } from "./inProcessServer"

/** The fan-out job of the email alerts, as its queue and payload are stored. */
const fanOut = JobDefinition.make({ queue: "alerts.fan-out", payload: Schema.Struct({ notificationId: Schema.UUID }) })

describe("the reference server on the embedded database, after a process that held jobs went away", () => {
  let dataDir: string
  beforeAll(async () => {
    dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-restart-"))
  })
  afterAll(() => Fs.rm(dataDir, { recursive: true, force: true }))

  it("runs the jobs that process was running at once, not when their leases run out", { timeout: 120_000 }, async () => {
    const env = { HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, SERVICES: "sso,alerts", LOG_LEVEL: "warning" }
    const config = Either.getOrThrow(parseServerConfig(env))
    // a process that claimed a job for ten minutes and was killed: its claim stays in the data directory
    const claimed = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const jobs = yield* JobQueue
      const { id } = yield* jobs.enqueue(fanOut, { notificationId: randomUUID() })
      yield* jobs.claim({ queue: fanOut.queue, workerId: "killed", limit: 1, leaseDuration: Duration.minutes(10) })
      return id
    }).pipe(Effect.provide(Layer.orDie(databaseWithJobsLayer(config))))))

    const server = await startInProcessServer(env)
    try {
      // the job names a notification that does not exist: the fan-out worker finishes it, which leaves no row
      const deadline = Date.now() + 30_000
      let rows: ReadonlyArray<unknown> = [claimed]
      while (rows.length > 0 && Date.now() < deadline) {
        rows = await Effect.runPromise(server.sql`SELECT id FROM jobs.jobs WHERE id = ${claimed}`)
        if (rows.length > 0) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(rows).toEqual([])
    } finally {
      await server.close()
    }
  })
})
