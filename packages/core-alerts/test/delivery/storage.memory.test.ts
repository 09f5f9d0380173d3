import { memoryStores } from "./backends"
import { emailStoreSuite } from "./storageSuite"

emailStoreSuite("memory", memoryStores)
