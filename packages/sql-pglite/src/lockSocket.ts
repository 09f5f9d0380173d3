import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as net from "node:net"

/** What a lock socket answers to whoever connects: its process, and whether that process holds the lock yet. */
const Status = Schema.parseJson(Schema.Struct({
  pid: Schema.Int.pipe(Schema.positive()),
  holding: Schema.Boolean
}))
export type Status = typeof Status.Type

const decodeStatus = Schema.decodeUnknownOption(Status)
const encodeStatus = Schema.encodeSync(Status)

/** A socket this process listens on. The OS closes it when the process dies, however it dies. */
export interface LockSocket {
  /** From now on, tells those who connect that this process holds the lock. */
  readonly markHolding: () => void
  readonly close: Effect.Effect<void>
}

export const listen = (address: string): Effect.Effect<LockSocket, NodeJS.ErrnoException> =>
  Effect.async((resume) => {
    let holding = false
    const server = net.createServer((connection) => {
      connection.on("error", () => {})
      connection.end(encodeStatus({ pid: process.pid, holding }))
    })
    const onError = (error: NodeJS.ErrnoException) => resume(Effect.fail(error))
    server.once("error", onError)
    server.listen(address, () => {
      server.off("error", onError)
      server.on("error", () => {})
      // The lock lasts as long as the process; it must not keep the process alive by itself.
      server.unref()
      resume(Effect.succeed({
        markHolding: () => {
          holding = true
        },
        close: Effect.sync(() => {
          server.close()
        })
      }))
    })
    return Effect.sync(() => {
      server.close()
    })
  })

export type Probe =
  /** A process listens there; its status unless it did not answer in time. */
  | { readonly _tag: "Live"; readonly status: Option.Option<Status> }
  /** A socket (or other file) that nobody listens on: its process is gone. */
  | { readonly _tag: "Dead" }
  | { readonly _tag: "Absent" }

const live = (status: Option.Option<Status>): Probe => ({ _tag: "Live", status })

const connect = (address: string) =>
  Effect.async<net.Socket | Probe, NodeJS.ErrnoException>((resume) => {
    const socket = net.connect(address)
    const onError = (error: NodeJS.ErrnoException) => {
      socket.destroy()
      switch (error.code) {
        case "ECONNREFUSED":
          return resume(Effect.succeed({ _tag: "Dead" }))
        case "ENOENT":
          return resume(Effect.succeed({ _tag: "Absent" }))
        // Its backlog is full: it is alive but busy.
        case "EAGAIN":
          return resume(Effect.succeed(live(Option.none())))
        default:
          return resume(Effect.fail(error))
      }
    }
    socket.once("error", onError)
    socket.once("connect", () => {
      socket.off("error", onError)
      // Whatever fails from now on only cuts the reply short.
      socket.on("error", () => {})
      resume(Effect.succeed(socket))
    })
    return Effect.sync(() => socket.destroy())
  })

const maxReplyBytes = 1024

const readReply = (socket: net.Socket) =>
  Effect.async<string>((resume) => {
    let reply = ""
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      resume(Effect.succeed(reply))
    }
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString()
      if (reply.length > maxReplyBytes) socket.destroy()
    })
    socket.once("end", finish)
    socket.once("close", finish)
  })

/**
 * Whether a process listens on `address`. A holder whose event loop is busy (a long statement) is still alive: the
 * OS accepts the connection for it, and only its answer is waited for, up to `replyTimeout`.
 */
export const probe = (
  address: string,
  replyTimeout: Duration.DurationInput = "1 second"
): Effect.Effect<Probe, NodeJS.ErrnoException> =>
  Effect.flatMap(connect(address), (connected) =>
    connected instanceof net.Socket
      ? readReply(connected).pipe(
        Effect.timeoutOption(replyTimeout),
        Effect.map((reply) => live(Option.flatMap(reply, decodeStatus))),
        Effect.ensuring(Effect.sync(() => connected.destroy()))
      )
      : Effect.succeed(connected))
