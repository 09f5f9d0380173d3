import { afterAll, beforeAll } from "@effect/vitest"
import { sharedPglite } from "./backends"
import { alertsHttpSuite } from "./suite"

const database = sharedPglite()
beforeAll(database.open)
afterAll(database.close)

alertsHttpSuite("PGlite, SQL job queue", database.backend)
