import { suiteOnPostgres, testPool } from "@civicstack/kit/testing"
import { migrateBoth, sqlBackend } from "./backends"
import { linkcheckHttpSuite } from "./suite"

suiteOnPostgres("lchttp", migrateBoth, (databaseUrl) => sqlBackend(testPool(databaseUrl)), linkcheckHttpSuite)
