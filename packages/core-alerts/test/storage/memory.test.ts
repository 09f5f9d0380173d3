import { memoryStores } from "../fixtures/backends"
import { emailStoreSuite } from "./emailSuite"
import { alertsStoreSuite } from "./suite"

alertsStoreSuite("memory", memoryStores)
emailStoreSuite("memory", memoryStores)
