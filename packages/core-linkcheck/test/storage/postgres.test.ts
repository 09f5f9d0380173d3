import { suiteOnPostgres } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import { postgresBackend } from "./backends"
import { linkcheckStoreSuite } from "./suite"

suiteOnPostgres("lcstore", migrate, postgresBackend, linkcheckStoreSuite)
