export { DataDirectoryNotEmpty } from "./createDataDirectory"
export { DataDirectoryInUse } from "./DataDirectoryLock"
export * as PgliteClient from "./PgliteClient"
