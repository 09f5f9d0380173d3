import { memoryBackend } from "./backends"
import { alertsHttpSuite } from "./suite"

alertsHttpSuite("memory", memoryBackend)
