export { emptyTables, sharedPglite, type StorageSuite, suiteOnPglite, suiteOnPostgres } from "./backends"
export { createTestDatabase, testPool } from "./postgres"
export { startTcpProxy, type TcpProxy } from "./tcpProxy"
export { importedModules, packedPackage } from "./packed"
