import { afterAll, beforeAll } from "@effect/vitest"
import { sharedPglite } from "./backends"
import { ssoStoreSuite } from "./suite"

const database = sharedPglite()
beforeAll(database.open)
afterAll(database.close)

ssoStoreSuite("PGlite", database.backend)
