import type { QueryOptions, Results } from "@electric-sql/pglite"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { types } from "pg"

const script = fileURLToPath(new URL("../scripts/pglite-worker.mjs", import.meta.url))

/**
 * PGlite running on a worker thread. It answers each statement with the
 * results of PGlite's `query` (with parameters) or `exec` (text of one or more
 * statements), values parsed as node-postgres parses them.
 */
export interface PgliteWorker {
  readonly query: (sql: string, params: ReadonlyArray<string | null>, options?: QueryOptions) => Promise<Array<Results>>
  readonly exec: (sql: string, options?: QueryOptions) => Promise<Array<Results>>
  /** Calls `listener` for each notification on a channel the session listens to; returns how to stop. */
  readonly onNotification: (listener: (channel: string, payload: string) => void) => () => void
  /** Closes the database, then ends the thread. */
  readonly close: () => Promise<void>
  /** Settles with the reason when the thread stops other than by `close`; every statement fails from then on. */
  readonly failure: Promise<Error>
}

export interface PgliteWorkerOptions {
  readonly dataDir: string | undefined
  readonly settings: ReadonlyArray<string>
  /** The thread's V8 heap limit in MB (V8's default when unset): a statement whose results pass it stops the thread. */
  readonly heapLimitMb: number | undefined
}

type Request =
  | { readonly op: "query"; readonly sql: string; readonly params: ReadonlyArray<string | null>; readonly options?: QueryOptions }
  | { readonly op: "exec"; readonly sql: string; readonly options?: QueryOptions }
  | { readonly op: "close" }

type Reply =
  | { readonly started: true }
  | { readonly started: false; readonly error: ErrorDescription }
  | { readonly notification: { readonly channel: string; readonly payload: string } }
  | { readonly id: number; readonly results: Array<Results> }
  | { readonly id: number; readonly error: ErrorDescription }

interface ErrorDescription {
  readonly name: string
  readonly message: string
  readonly [property: string]: unknown
}

/** An error as thrown on the worker, with Postgres's fields (`code`, `detail`, ...) as own properties. */
const toError = ({ message, ...properties }: ErrorDescription): Error => Object.assign(new Error(message), properties)

/**
 * bytea, bytea[], interval and interval[]: their parsed values (Buffers, interval objects) would reach this thread
 * as plain Uint8Arrays and objects, so the worker returns their text and they are parsed here.
 */
const parsedOnCaller = [17, 1001, 1186, 1187]

const parseOnCaller = (result: Results): Results => {
  const fields = result.fields ?? []
  for (let index = 0; index < fields.length; index++) {
    const { dataTypeID, name } = fields[index]!
    if (!parsedOnCaller.includes(dataTypeID)) continue
    const parse = types.getTypeParser(dataTypeID, "text")
    const key = Array.isArray(result.rows[0]) ? index : name
    for (const row of result.rows as Array<Record<string | number, unknown>>) {
      const text = row[key]
      if (typeof text === "string") row[key] = parse(text)
    }
  }
  return result
}

const YOUNG_GENERATION_MB = 8

export const startPgliteWorker = ({ dataDir, heapLimitMb, settings }: PgliteWorkerOptions): Promise<PgliteWorker> =>
  new Promise((resolveStart, rejectStart) => {
    const worker = new Worker(script, {
      // No flags of this process (such as a TypeScript loader): the script is plain JavaScript.
      execArgv: [],
      // The thread's garbage is short-lived (rows on their way to the caller): a small young generation keeps its
      // memory low.
      resourceLimits: {
        maxYoungGenerationSizeMb: YOUNG_GENERATION_MB,
        ...(heapLimitMb !== undefined && { maxOldGenerationSizeMb: heapLimitMb })
      },
      workerData: { dataDir, parsedOnCaller, settings: [...settings] }
    })
    const pending = new Map<number, { resolve: (results: Array<Results>) => void; reject: (error: Error) => void }>()
    const listeners = new Set<(channel: string, payload: string) => void>()
    let nextId = 0
    let stopped: Error | undefined
    let closing = false
    let reportFailure: (error: Error) => void = () => {}
    const failure = new Promise<Error>((resolve) => {
      reportFailure = resolve
    })

    const stop = (error: Error) => {
      if (stopped !== undefined) return
      stopped = error
      rejectStart(error)
      for (const request of pending.values()) request.reject(error)
      pending.clear()
      if (!closing) reportFailure(error)
    }
    worker.on("error", (error) => stop(new Error(`The PGlite worker failed: ${error.message}`, { cause: error })))
    worker.on("exit", (code) => stop(new Error(`The PGlite worker stopped (exit code ${code})`)))

    const send = (request: Request): Promise<Array<Results>> =>
      new Promise((resolve, reject) => {
        if (stopped !== undefined) return reject(stopped)
        const id = nextId++
        pending.set(id, { resolve, reject })
        worker.postMessage({ ...request, id })
      })

    worker.on("message", (reply: Reply) => {
      if ("started" in reply) {
        if (!reply.started) return stop(toError(reply.error))
        return resolveStart({
          query: (sql, params, options) => send({ op: "query", sql, params, ...(options && { options }) }),
          exec: (sql, options) => send({ op: "exec", sql, ...(options && { options }) }),
          onNotification: (listener) => {
            listeners.add(listener)
            return () => listeners.delete(listener)
          },
          close: async () => {
            closing = true
            await send({ op: "close" })
            await worker.terminate()
          },
          failure
        })
      }
      if ("notification" in reply) {
        for (const listener of listeners) listener(reply.notification.channel, reply.notification.payload)
        return
      }
      const request = pending.get(reply.id)
      pending.delete(reply.id)
      if ("error" in reply) request?.reject(toError(reply.error))
      else request?.resolve(reply.results.map(parseOnCaller))
    })
  })
