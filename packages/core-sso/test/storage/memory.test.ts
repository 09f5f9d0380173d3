import { memoryBackend } from "./backends"
import { ssoStoreSuite } from "./suite"

ssoStoreSuite("memory", memoryBackend)
