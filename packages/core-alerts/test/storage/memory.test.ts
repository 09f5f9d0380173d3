import { memoryBackend } from "./backends"
import { alertsStoreSuite } from "./suite"

alertsStoreSuite("memory", memoryBackend)
