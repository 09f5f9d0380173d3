import { suiteOnPglite } from "@civicstack/kit/testing"
import { migrateAll, sqlStores } from "../fixtures/backends"
import { emailStoreSuite } from "./emailSuite"
import { sqlEmailStoreSuite } from "./sqlEmailSuite"
import { alertsStoreSuite } from "./suite"

suiteOnPglite(migrateAll, sqlStores, (name, backend) => {
  alertsStoreSuite(name, backend)
  emailStoreSuite(name, backend)
  sqlEmailStoreSuite(name, backend)
})
