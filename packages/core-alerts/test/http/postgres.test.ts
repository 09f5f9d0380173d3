import { suiteOnPostgres } from "@civicstack/kit/testing"
import { migrateAll, postgresService } from "../fixtures/backends"
import { alertsHttpSuite } from "./suite"

suiteOnPostgres(
  "alertshttp",
  migrateAll,
  postgresService,
  (name, backend) => alertsHttpSuite(`${name}, SQL job queue`, (settings) => backend()(settings))
)
