import { memoryService } from "../fixtures/backends"
import { alertsHttpSuite } from "./suite"

alertsHttpSuite("memory", memoryService)
