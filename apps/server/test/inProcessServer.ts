import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Either, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { serverLayer } from "../src/app"
import { parseServerConfig } from "../src/config"

export interface InProcessServer {
  readonly url: string
  /** Its DATA_DIR, removed on `close`. */
  readonly dataDir: string
  readonly sql: SqlClient.SqlClient
  readonly close: () => Promise<void>
}

/** The reference server built in this process on a fresh embedded database, listening on a free port. */
export const startInProcessServer = async (env: Record<string, string> = {}): Promise<InProcessServer> => {
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-http-"))
  const config = Either.getOrThrow(
    parseServerConfig({ HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "warning", ...env })
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(serverLayer(config), scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  const port = address._tag === "TcpAddress" ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    sql: Context.get(context, SqlClient.SqlClient),
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await Fs.rm(dataDir, { recursive: true, force: true })
    }
  }
}

export const count = (server: InProcessServer, table: string) =>
  Effect.runPromise(
    Effect.map(server.sql<{ n: string }>`SELECT count(*) AS n FROM ${server.sql(table)}`, (rows) => Number(rows[0]?.n))
  )
