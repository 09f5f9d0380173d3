import { suiteOnPglite } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import { pgliteBackend } from "./backends"
import { ssoStoreSuite } from "./suite"

suiteOnPglite(migrate, pgliteBackend, ssoStoreSuite)
