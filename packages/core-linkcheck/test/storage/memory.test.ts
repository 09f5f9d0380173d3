import { memoryBackend } from "./backends"
import { linkcheckStoreSuite } from "./suite"

linkcheckStoreSuite("memory", memoryBackend)
