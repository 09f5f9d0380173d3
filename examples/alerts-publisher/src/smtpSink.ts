import { simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

/** An email as it arrived at the sink. */
export interface ArrivedEmail {
  readonly to: ReadonlyArray<string>
  readonly from: string
  readonly subject: string
  readonly text: string
  readonly html: string
  /** RFC 8058's one-click unsubscribe link, when the message has one. */
  readonly listUnsubscribe: string | undefined
}

export interface SmtpSink {
  readonly port: number
  readonly received: ReadonlyArray<ArrivedEmail>
  /** Resolves once `count` emails have arrived, or rejects after `timeoutMs`. */
  readonly waitFor: (count: number, timeoutMs: number) => Promise<ReadonlyArray<ArrivedEmail>>
  readonly close: () => Promise<void>
}

const headerLine = (raw: string, name: string) =>
  new RegExp(`^${name}:\\s*(.+)$`, "im").exec(raw.split(/\r?\n\r?\n/)[0]?.replace(/\r?\n[ \t]+/g, " ") ?? "")?.[1]?.trim()

/** A local SMTP server that accepts every message (no TLS, no login) and keeps it, for watching what is sent. */
export const startSmtpSink = async (options: { readonly port?: number; readonly host?: string } = {}): Promise<SmtpSink> => {
  const received: Array<ArrivedEmail> = []
  const waiting = new Set<() => void>()
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        const raw = Buffer.concat(chunks)
        simpleParser(raw).then((mail) => {
          received.push({
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            from: mail.from?.text ?? "",
            subject: mail.subject ?? "",
            text: mail.text ?? "",
            html: typeof mail.html === "string" ? mail.html : "",
            listUnsubscribe: headerLine(raw.toString("utf8"), "List-Unsubscribe")
          })
          for (const wake of waiting) wake()
          callback()
        }, callback)
      })
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve())
  })
  const port = (server.server.address() as AddressInfo).port

  const waitFor = (count: number, timeoutMs: number) =>
    new Promise<ReadonlyArray<ArrivedEmail>>((resolve, reject) => {
      const check = () => {
        if (received.length < count) return
        cleanUp()
        resolve([...received])
      }
      const timer = setTimeout(() => {
        cleanUp()
        reject(new Error(`${received.length} of ${count} emails arrived within ${timeoutMs} ms`))
      }, timeoutMs)
      const cleanUp = () => {
        clearTimeout(timer)
        waiting.delete(check)
      }
      waiting.add(check)
      check()
    })

  return {
    port,
    received,
    waitFor,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
