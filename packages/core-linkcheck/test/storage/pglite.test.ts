import { afterAll, beforeAll } from "@effect/vitest"
import { sharedPglite } from "./backends"
import { linkcheckStoreSuite } from "./suite"

const database = sharedPglite()
beforeAll(database.open)
afterAll(database.close)

linkcheckStoreSuite("PGlite", database.backend)
