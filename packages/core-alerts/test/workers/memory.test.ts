import { memoryStores } from "../fixtures/backends"
import { workerSuite } from "./suite"

workerSuite("memory", memoryStores)
