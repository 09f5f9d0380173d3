import { memoryStores } from "./backends"
import { workerSuite } from "./workerSuite"

workerSuite("memory", memoryStores)
