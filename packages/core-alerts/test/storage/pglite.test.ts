import { afterAll, beforeAll } from "@effect/vitest"
import { sharedPglite } from "./backends"
import { alertsStoreSuite } from "./suite"

const database = sharedPglite()
beforeAll(database.open)
afterAll(database.close)

alertsStoreSuite("PGlite", database.backend)
