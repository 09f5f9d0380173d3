import { afterAll, beforeAll, describe } from "@effect/vitest"
import { createTestDatabase, postgresBackend } from "./backends"
import { alertsHttpSuite } from "./suite"

const serverUrl = process.env["TEST_DATABASE_URL"]

describe.skipIf(serverUrl === undefined)("PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined
  beforeAll(async () => {
    database = await createTestDatabase(serverUrl!)
  })
  afterAll(() => database?.drop())

  alertsHttpSuite("PostgreSQL, SQL job queue", (settings) => postgresBackend(database!.url)(settings))
})
