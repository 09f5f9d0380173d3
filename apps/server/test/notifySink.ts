import { createServer } from "node:http"
import type { ServerResponse } from "node:http"
import type * as Net from "node:net"

/**
 * A GOV.UK Notify stand-in on 127.0.0.1 that answers 201 at once to every `POST .../v2/notifications/email` and counts
 * the emails per address, per reference (the email's id) and per copy: a server sends through `urlFor(copy)`, a base
 * URL with the copy's name as its first path segment. An email counts once its whole request arrived, before the
 * answer: one whose sender is killed before it reads the 201 has still reached the provider.
 */
export interface NotifySink {
  /** The NOTIFY_BASE_URL a server of `copy` sends through. */
  readonly urlFor: (copy: string) => string
  /** Emails accepted for `address`. */
  readonly countFor: (address: string) => number
  readonly total: () => number
  /** Emails accepted per copy. */
  readonly byCopy: () => ReadonlyMap<string, number>
  /** Addresses with the copies that sent them an email, in arrival order (one entry per email). */
  readonly sendersOf: (address: string) => ReadonlyArray<string>
  /** Addresses that received more than one email, with their counts. */
  readonly duplicates: () => ReadonlyArray<readonly [string, number]>
  /** References (the ids of the emails) that arrived more than once. */
  readonly repeatedReferences: () => ReadonlyArray<string>
  readonly recipients: () => ReadonlyArray<string>
  readonly subjects: () => ReadonlySet<string>
  /** The emails accepted for `address`: their references (the emails' ids) and when each arrived (`Date.now()`). */
  readonly deliveriesTo: (address: string) => ReadonlyArray<{ readonly reference: string; readonly at: number }>
  /** Requests that were not a well-formed email (wrong path, method, body or bearer token). */
  readonly refused: () => number
  readonly close: () => Promise<void>
}

interface NotifyBody {
  readonly email_address?: unknown
  readonly template_id?: unknown
  readonly reference?: unknown
  readonly personalisation?: { readonly subject?: unknown; readonly body?: unknown }
}

const EMAIL_PATH = /^\/([^/]+)\/v2\/notifications\/email$/

export const startNotifySink = async (): Promise<NotifySink> => {
  const perAddress = new Map<string, Array<string>>()
  const perCopy = new Map<string, number>()
  const references = new Map<string, number>()
  const deliveries = new Map<string, Array<{ readonly reference: string; readonly at: number }>>()
  const subjects = new Set<string>()
  let total = 0
  let refused = 0
  const refuse = (response: ServerResponse, status: number) => {
    refused += 1
    response.writeHead(status, { "content-type": "application/json" })
    response.end(`{"errors":[{"error":"BadRequestError","message":"refused by the test sink"}]}`)
  }
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const copy = request.method === "POST" ? EMAIL_PATH.exec(request.url ?? "")?.[1] : undefined
      if (copy === undefined) return refuse(response, 404)
      if (!/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/.test(request.headers.authorization ?? "")) return refuse(response, 403)
      let body: NotifyBody
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as NotifyBody
      } catch {
        return refuse(response, 400)
      }
      const address = typeof body.email_address === "string" ? body.email_address.toLowerCase() : undefined
      if (address === undefined || typeof body.reference !== "string") return refuse(response, 400)
      const senders = perAddress.get(address) ?? []
      senders.push(decodeURIComponent(copy))
      perAddress.set(address, senders)
      perCopy.set(decodeURIComponent(copy), (perCopy.get(decodeURIComponent(copy)) ?? 0) + 1)
      references.set(body.reference, (references.get(body.reference) ?? 0) + 1)
      deliveries.set(address, [...(deliveries.get(address) ?? []), { reference: body.reference, at: Date.now() }])
      if (typeof body.personalisation?.subject === "string") subjects.add(body.personalisation.subject)
      total += 1
      response.writeHead(201, { "content-type": "application/json" })
      response.end(`{"id":"${total}","reference":${JSON.stringify(body.reference)}}`)
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as Net.AddressInfo
  return {
    urlFor: (copy) => `http://127.0.0.1:${port}/${encodeURIComponent(copy)}`,
    countFor: (address) => perAddress.get(address.toLowerCase())?.length ?? 0,
    total: () => total,
    byCopy: () => perCopy,
    sendersOf: (address) => perAddress.get(address.toLowerCase()) ?? [],
    duplicates: () =>
      [...perAddress.entries()].flatMap(([address, senders]) => senders.length > 1 ? [[address, senders.length] as const] : []),
    repeatedReferences: () => [...references.entries()].flatMap(([reference, count]) => count > 1 ? [reference] : []),
    recipients: () => [...perAddress.keys()],
    deliveriesTo: (address) => deliveries.get(address.toLowerCase()) ?? [],
    subjects: () => subjects,
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
