import * as Net from "node:net"
import { Effect } from "effect"
import { simpleParser } from "mailparser"
import type { ParsedMail } from "mailparser"
import { SMTPServer } from "smtp-server"

export interface ReceivedMessage {
  readonly envelopeFrom: string | undefined
  readonly envelopeTo: ReadonlyArray<string>
  readonly parsed: ParsedMail
}

export interface SmtpServerOptions {
  /** Replies to RCPT TO by address: a code and text, e.g. `[550, "5.1.1 no such user"]`. */
  readonly refuseRecipients?: Readonly<Record<string, readonly [number, string]>>
  /** A reply to the end of DATA instead of accepting the message. */
  readonly refuseData?: readonly [number, string]
}

const smtpReply = ([code, text]: readonly [number, string]) => Object.assign(new Error(text), { responseCode: code })

/** A real SMTP server on 127.0.0.1 that requires `user`/`secret`, parses each message it accepts, and stops with the scope. */
export const startSmtpServer = (options: SmtpServerOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<ReceivedMessage> = []
      const logins: Array<string> = []
      const server = new SMTPServer({
        logger: false,
        disabledCommands: ["STARTTLS"],
        allowInsecureAuth: true,
        onAuth: (auth, _session, callback) => {
          logins.push(`${auth.username}:${auth.password}`)
          return auth.username === "user" && auth.password === "p@ss word"
            ? callback(null, { user: auth.username })
            : callback(Object.assign(new Error("bad credentials"), { responseCode: 535 }))
        },
        onRcptTo: (address, _session, callback) => {
          const refusal = options.refuseRecipients?.[address.address]
          callback(refusal === undefined ? null : smtpReply(refusal))
        },
        onData: (stream, session, callback) => {
          simpleParser(stream).then(
            (parsed) => {
              if (options.refuseData !== undefined) return callback(smtpReply(options.refuseData))
              received.push({
                envelopeFrom: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
                envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
                parsed
              })
              callback()
            },
            (error: Error) => callback(error)
          )
        }
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
      const { port } = server.server.address() as Net.AddressInfo
      return { server, port, received, logins, url: `smtp://user:p%40ss%20word@127.0.0.1:${port}` }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

/** A TCP server that takes connections and never says a word: no greeting, no reply. */
export const startSilentServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const sockets = new Set<Net.Socket>()
    const server = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => undefined)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
    const { port } = server.address() as Net.AddressInfo
    return { server, sockets, url: `smtp://127.0.0.1:${port}` }
  }),
  ({ server, sockets }) =>
    Effect.promise(() =>
      new Promise<void>((resolve) => {
        sockets.forEach((socket) => socket.destroy())
        server.close(() => resolve())
      })
    )
)
