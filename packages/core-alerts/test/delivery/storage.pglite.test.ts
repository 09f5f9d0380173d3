import { afterAll, beforeAll } from "@effect/vitest"
import { sharedPglite } from "./backends"
import { emailStoreSuite } from "./storageSuite"

const database = sharedPglite()
beforeAll(database.open)
afterAll(database.close)

emailStoreSuite("PGlite", database.backend)
