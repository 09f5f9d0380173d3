import { afterAll, beforeAll } from "@effect/vitest"
import { sharedPglite } from "./backends"
import { workerSuite } from "./workerSuite"

const database = sharedPglite()
beforeAll(database.open)
afterAll(database.close)

workerSuite("PGlite", database.backend)
