import { afterAll, beforeAll, describe } from "@effect/vitest"
import { createTestDatabase, postgresStores } from "./backends"
import { sqlEmailStoreSuite } from "./sqlStorageSuite"
import { emailStoreSuite } from "./storageSuite"

const serverUrl = process.env["TEST_DATABASE_URL"]

describe.skipIf(serverUrl === undefined)("PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined
  beforeAll(async () => {
    database = await createTestDatabase(serverUrl!)
  })
  afterAll(() => database?.drop())

  emailStoreSuite("PostgreSQL", () => postgresStores(database!.url))
  sqlEmailStoreSuite("PostgreSQL", () => postgresStores(database!.url))
})
