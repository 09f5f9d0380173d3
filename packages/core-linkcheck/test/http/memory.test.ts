import { memoryBackend } from "./backends"
import { linkcheckHttpSuite } from "./suite"

linkcheckHttpSuite("memory", memoryBackend)
