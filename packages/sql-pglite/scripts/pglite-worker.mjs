// Run by PgliteClient on a worker thread (see src/PgliteWorker.ts): the database runs here, so its statements use
// another core and do not hold up the event loop of the thread that sends them.
import { PGlite } from "@electric-sql/pglite"
import { writeFileSync } from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { createRequire } from "node:module"

/**
 * node-postgres's own parsers, from the pg-types it depends on: importing all of pg would also load Node's fetch
 * (pg probes for Cloudflare with `Response`), about 8 MB that this thread never uses.
 */
const pgTypes = createRequire(createRequire(import.meta.url).resolve("pg"))("pg-types")

const port = parentPort
if (port === null) throw new Error("pglite-worker.mjs runs on a worker thread")

/** On Linux the thread shows as `pglite` in `top -H` and `ps -L`, so the database's CPU can be told from the rest. */
const nameThisThread = () => {
  try {
    writeFileSync("/proc/thread-self/comm", "pglite")
  } catch {
    // not Linux, or /proc is not mounted: the name is only for operators
  }
}
nameThisThread()

/** The sender has already turned every parameter into PostgreSQL text. */
const asText = (value) => value

/**
 * Every built-in type gets node-postgres's text parser, so values come back as `@effect/sql-pg` returns them: int8
 * and numeric stay strings, and so on. The types whose values a structured clone would change (Buffers, interval
 * objects) stay text: the caller's thread parses them (`parsedOnCaller` in src/PgliteWorker.ts).
 */
const useNodePostgresParsers = async (database, parsedOnCaller) => {
  const { rows } = await database.query("SELECT oid::int4 AS oid FROM pg_catalog.pg_type")
  for (const { oid } of rows) {
    database.parsers[oid] = parsedOnCaller.includes(oid) ? asText : pgTypes.getTypeParser(oid, "text")
  }
}

/**
 * An error's own properties of plain values (Postgres's `code`, `detail`, `constraint`, ...), which a structured
 * clone of the error would drop.
 */
const describeError = (error) => {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) }
  const isPlain = (value) => value === null || (typeof value !== "object" && typeof value !== "function")
  const plain = Object.entries(error).filter(([, value]) => isPlain(value))
  return { ...Object.fromEntries(plain), name: error.name, message: error.message }
}

const { dataDir, parsedOnCaller, settings } = workerData
let database
try {
  database = await PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), postgresqlconf: settings })
  await useNodePostgresParsers(database, parsedOnCaller)
} catch (error) {
  port.postMessage({ started: false, error: describeError(error) })
  process.exit(1)
}
const serializers = Object.fromEntries(Object.keys(database.serializers).map((type) => [type, asText]))

database.onNotification((channel, payload) => port.postMessage({ notification: { channel, payload } }))

const run = ({ op, options, params, sql }) => {
  switch (op) {
    case "exec":
      return database.exec(sql, options)
    case "query":
      return database.query(sql, params, { ...options, serializers }).then((result) => [result])
    case "close":
      return database.close().then(() => [])
    default:
      return Promise.reject(new Error(`Unknown operation ${op}`))
  }
}

port.on("message", async (request) => {
  try {
    port.postMessage({ id: request.id, results: await run(request) })
  } catch (error) {
    port.postMessage({ id: request.id, error: describeError(error) })
  }
  if (request.op === "close") port.close()
})

port.postMessage({ started: true })
