import { suiteOnPglite } from "@civicstack/kit/testing"
import { migrateAll, sqlService } from "../fixtures/backends"
import { alertsHttpSuite } from "./suite"

suiteOnPglite(migrateAll, sqlService, (name, backend) => alertsHttpSuite(`${name}, SQL job queue`, (settings) => backend()(settings)))
