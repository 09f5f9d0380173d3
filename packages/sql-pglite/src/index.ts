export { DataDirectoryInUse } from "./DataDirectoryLock"
export * as PgliteClient from "./PgliteClient"
