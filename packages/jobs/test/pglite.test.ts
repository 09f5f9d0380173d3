import { PgliteClient } from "@civicstack/sql-pglite"
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Layer, Option } from "effect"
import { JobQueue, layerSql } from "../src/index"
import { TestBackend } from "./helpers"
import { pgliteForFile } from "./pgliteForFile"
import { jobQueueSuite } from "./suite"

// emptied before each test
const database = pgliteForFile()

const queueOverPglite = Layer.unwrapEffect(
  Effect.map(PgliteClient.PgliteClient, (client) => layerSql({ listen: client.listen }))
)

/** The second copy is another queue over the same database: PGlite is a single session in a single process. */
const pgliteBackend = Layer.scoped(
  TestBackend,
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`TRUNCATE jobs.jobs, jobs.schedules RESTART IDENTITY`
    const secondCopy = yield* Layer.build(queueOverPglite)
    return {
      secondCopy: Context.make(JobQueue, Context.get(secondCopy, JobQueue)),
      transaction: Option.some(sql.withTransaction)
    }
  })
).pipe(
  Layer.provideMerge(queueOverPglite),
  Layer.provideMerge(Layer.effectContext(Effect.sync(database)))
)

jobQueueSuite("PGlite", pgliteBackend, { transactional: true })
