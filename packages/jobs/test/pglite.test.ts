import { PgliteClient } from "@civicstack/sql-pglite"
import { afterAll, beforeAll } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { JobQueue, layerSql, migrate } from "../src/index"
import { TestBackend } from "./helpers"
import { jobQueueSuite } from "./suite"

// One in-memory database for the file (starting PGlite takes seconds), emptied before each test.
let scope: Scope.CloseableScope
let database: Context.Context<PgliteClient.PgliteClient | SqlClient>
beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  database = await Effect.runPromise(
    Layer.buildWithScope(PgliteClient.layer({}), scope).pipe(Effect.tap((context) => Effect.provide(migrate, context)))
  )
}, 120_000)
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

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
  Layer.provideMerge(Layer.effectContext(Effect.sync(() => database)))
)

jobQueueSuite("PGlite", pgliteBackend, { transactional: true })
