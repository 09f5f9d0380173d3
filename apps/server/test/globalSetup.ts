import { buildServer } from "./builtServer"

export default buildServer
