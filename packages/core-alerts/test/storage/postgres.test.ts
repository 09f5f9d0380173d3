import { suiteOnPostgres } from "@civicstack/kit/testing"
import { migrateAll, postgresStores } from "../fixtures/backends"
import { emailStoreSuite } from "./emailSuite"
import { sqlEmailStoreSuite } from "./sqlEmailSuite"
import { alertsStoreSuite } from "./suite"

suiteOnPostgres("alertsstore", migrateAll, postgresStores, (name, backend) => {
  alertsStoreSuite(name, backend)
  emailStoreSuite(name, backend)
  sqlEmailStoreSuite(name, backend)
})
