import { suiteOnPostgres } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import { postgresBackend } from "./backends"
import { ssoStoreSuite } from "./suite"

suiteOnPostgres("ssostore", migrate, postgresBackend, ssoStoreSuite)
