import { suiteOnPglite } from "@civicstack/kit/testing"
import { migrateBoth, sqlBackend } from "./backends"
import { linkcheckHttpSuite } from "./suite"

suiteOnPglite(migrateBoth, sqlBackend, linkcheckHttpSuite)
