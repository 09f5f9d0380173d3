import { afterAll, beforeAll } from "@effect/vitest"
import { sharedPglite } from "./backends"
import { sqlEmailStoreSuite } from "./sqlStorageSuite"
import { emailStoreSuite } from "./storageSuite"

const database = sharedPglite()
beforeAll(database.open)
afterAll(database.close)

emailStoreSuite("PGlite", database.backend)
sqlEmailStoreSuite("PGlite", database.backend)
