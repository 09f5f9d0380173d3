import type { AddressObject } from "mailparser"
import { simpleParser } from "mailparser"
import * as Net from "node:net"
import { SMTPServer } from "smtp-server"

export interface SinkOptions {
  /** How long the sink waits before its answer to the end of DATA: keeps deliveries in flight. */
  readonly answerDelayMs: number
  /** The reply to every RCPT TO, such as a relay's `550 5.7.1 Relaying denied`; each refusal is counted. */
  readonly refuseRecipients?: { readonly code: number; readonly text: string }
}

/**
 * An SMTP server on 127.0.0.1 that takes every message and counts it per recipient and per login, once it has
 * answered 250 to a client still there to hear it (a message whose sender went away first was never accepted).
 */
export interface MailSink {
  /** The SMTP URL a server sends through, logging in as `login` so the sink can tell copies apart. */
  readonly urlFor: (login: string) => string
  /** Messages accepted for `address`. */
  readonly countFor: (address: string) => number
  readonly total: () => number
  /** Messages accepted per login. */
  readonly byLogin: () => ReadonlyMap<string, number>
  /** Recipients that received more than one message, with their counts. */
  readonly duplicates: () => ReadonlyArray<readonly [string, number]>
  readonly recipients: () => ReadonlyArray<string>
  readonly subjects: () => ReadonlySet<string>
  /** Recipients refused under `refuseRecipients`. */
  readonly refusals: () => number
  /** The envelope senders (MAIL FROM: where bounces go) of the messages to `address`, in arrival order. */
  readonly returnPathsOf: (address: string) => ReadonlyArray<string>
  /** Resolves once no message is being received or answered (after a sender is killed, its last ones are settled). */
  readonly settled: () => Promise<void>
  readonly close: () => Promise<void>
}

const addressesIn = (to: AddressObject | ReadonlyArray<AddressObject> | undefined): ReadonlyArray<string> =>
  (to === undefined ? [] : Array.isArray(to) ? (to as ReadonlyArray<AddressObject>) : [to as AddressObject])
    .flatMap((group) => group.value.map((entry) => entry.address?.toLowerCase() ?? ""))
    .filter((address) => address !== "")

export const startMailSink = async (options: SinkOptions): Promise<MailSink> => {
  const perRecipient = new Map<string, number>()
  const perLogin = new Map<string, number>()
  const subjects = new Set<string>()
  const gone = new Set<string>()
  const returnPaths = new Map<string, Array<string>>()
  let total = 0
  let inProgress = 0
  let refusals = 0
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authOptional: true,
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
    onClose: (session) => { gone.add(session.id) },
    onRcptTo: (_address, _session, callback) => {
      const refusal = options.refuseRecipients
      if (refusal === undefined) return callback()
      refusals += 1
      callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }))
    },
    onData: (stream, session, callback) => {
      inProgress += 1
      simpleParser(stream).then(
        async (parsed) => {
          await new Promise((resolve) => setTimeout(resolve, options.answerDelayMs))
          if (gone.has(session.id)) return callback(new Error("the client went away before the answer"))
          const login = typeof session.user === "string" ? session.user : "(none)"
          perLogin.set(login, (perLogin.get(login) ?? 0) + 1)
          for (const address of addressesIn(parsed.to)) {
            perRecipient.set(address, (perRecipient.get(address) ?? 0) + 1)
            const from = session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address
            returnPaths.set(address, [...(returnPaths.get(address) ?? []), from])
          }
          if (parsed.subject !== undefined) subjects.add(parsed.subject)
          total += 1
          callback()
        },
        (error: Error) => callback(error)
      ).finally(() => { inProgress -= 1 })
    }
  })
  server.on("error", () => undefined)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.server.address() as Net.AddressInfo
  return {
    urlFor: (login) => `smtp://${encodeURIComponent(login)}:secret@127.0.0.1:${port}`,
    countFor: (address) => perRecipient.get(address.toLowerCase()) ?? 0,
    total: () => total,
    byLogin: () => perLogin,
    duplicates: () => [...perRecipient.entries()].filter(([, count]) => count > 1),
    recipients: () => [...perRecipient.keys()],
    subjects: () => subjects,
    refusals: () => refusals,
    returnPathsOf: (address) => returnPaths.get(address.toLowerCase()) ?? [],
    settled: async () => {
      // bounded: a message cut off in the middle ends when its connection's close is noticed
      const deadline = Date.now() + 5_000
      while (inProgress > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
