import { suiteOnPglite } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import { pgliteBackend } from "./backends"
import { linkcheckStoreSuite } from "./suite"

suiteOnPglite(migrate, pgliteBackend, linkcheckStoreSuite)
