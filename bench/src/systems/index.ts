import type { BenchSystem } from "../system"
import { civicstackPgliteSystem, civicstackPostgresSystem } from "./civicstack"
import { graphileWorkerSystem } from "./graphileWorker"
import { pgBossSystem } from "./pgBoss"

/** Every system the bench knows, in the order they run and appear in the table. */
export const allSystems: ReadonlyArray<BenchSystem> = [
  civicstackPostgresSystem,
  civicstackPgliteSystem,
  graphileWorkerSystem,
  pgBossSystem({
    id: "pg-boss",
    label: "pg-boss",
    batchSizeOf: (settings) => settings.concurrency
  }),
  pgBossSystem({
    id: "pg-boss-batch",
    label: "pg-boss (large batch)",
    batchSizeOf: (settings) => settings.pgBossLargeBatch
  })
]
