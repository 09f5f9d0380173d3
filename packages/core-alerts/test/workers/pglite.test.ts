import { suiteOnPglite } from "@civicstack/kit/testing"
import { migrateAll, sqlStores } from "../fixtures/backends"
import { workerSuite } from "./suite"

suiteOnPglite(migrateAll, sqlStores, workerSuite)
