import { it } from "@effect/vitest"
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { checkDestination, makeOutboundClient } from "../src/client"
import { guardedLookup, REFUSED_ADDRESS_CODE } from "../src/lookup"
import type { Resolver } from "../src/lookup"

let server: Http.Server
let origin: string
const received: Array<string> = []
beforeAll(async () => {
  server = Http.createServer((request, response) => {
    received.push(`${request.method} ${request.url}`)
    if (request.url === "/big") return response.end(Buffer.alloc(64 * 1024, "x"))
    if (request.url === "/stall") return response.writeHead(200).write("partial")
    request.resume()
    request.on("end", () => response.writeHead(201, { "x-answer": "yes" }).end("created"))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))

const client = (allowPrivateAddresses: boolean, resolve?: Resolver) =>
  makeOutboundClient({
    allowPrivateAddresses,
    resolve,
    userAgent: "outbound-test",
    connectTimeout: "2 seconds",
    responseTimeout: "2 seconds",
    totalTimeout: "1 second",
    maxResponseBytes: 1024
  })

describe("the outbound client", () => {
  it.scoped("refuses an IP-literal private destination before connecting, and reaches it only when allowed", () =>
    Effect.gen(function*() {
      const before = received.length
      const refused = yield* Effect.flip((yield* client(false)).request(`${origin}/hook`, { method: "POST", body: "{}" }))
      expect({ reason: refused.reason, permanent: refused.permanent }).toEqual({ reason: "privateAddress", permanent: true })
      expect(received.length).toBe(before)
      const answer = yield* (yield* client(true)).request(`${origin}/hook`, { method: "POST", body: "{}" })
      expect({ status: answer.status, body: Buffer.from(answer.body).toString(), header: answer.headers["x-answer"] })
        .toEqual({ status: 201, body: "created", header: "yes" })
    }))

  it.scoped("refuses a name that resolves to a private address, even beside a public one", () =>
    Effect.gen(function*() {
      const { port } = new URL(origin)
      const twoFaced: Resolver = async () => [{ address: "8.8.8.8", family: 4 }, { address: "127.0.0.1", family: 4 }]
      const refused = yield* Effect.flip(
        (yield* client(false, twoFaced)).request(`http://two-faced.test:${port}/`, { method: "GET" })
      )
      expect(refused.reason).toBe("privateAddress")
      expect(refused.permanent).toBe(true)
    }))

  it.scoped("refuses what is not an absolute http(s) URL for good", () =>
    Effect.gen(function*() {
      for (const url of ["ftp://example.org/", "not a url", "http://"]) {
        const refused = yield* Effect.flip(checkDestination(url, { allowPrivateAddresses: true }))
        expect({ url, reason: refused.reason, permanent: refused.permanent }).toEqual({ url, reason: "invalidUrl", permanent: true })
      }
    }))

  it.scoped("fails an answer over the size limit, and one that stalls past the total timeout, as worth retrying", () =>
    Effect.gen(function*() {
      const outbound = yield* client(true)
      const tooBig = yield* Effect.flip(outbound.request(`${origin}/big`, { method: "GET" }))
      expect({ reason: tooBig.reason, permanent: tooBig.permanent }).toEqual({ reason: "bodyTooLarge", permanent: false })
      const stalled = yield* Effect.flip(outbound.request(`${origin}/stall`, { method: "GET" }))
      expect({ reason: stalled.reason, permanent: stalled.permanent }).toEqual({ reason: "responseTimeout", permanent: false })
    }))
})

describe("guardedLookup", () => {
  const lookup = (resolve: Resolver, allowPrivateAddresses: boolean, hostname = "host.test") =>
    new Promise<{ error: NodeJS.ErrnoException | null; addresses: unknown }>((resolveLookup) =>
      guardedLookup({ resolve, allowPrivateAddresses })(hostname, { all: true }, (error, addresses) =>
        resolveLookup({ error, addresses })))

  it.effect("passes public addresses on and refuses private ones with a code callers can recognise", () =>
    Effect.promise(async () => {
      const publicOnly: Resolver = async () => [{ address: "2606:4700::1111", family: 6 }]
      expect((await lookup(publicOnly, false)).addresses).toEqual([{ address: "2606:4700::1111", family: 6 }])
      const mapped: Resolver = async () => [{ address: "::ffff:10.0.0.1", family: 6 }]
      expect((await lookup(mapped, false)).error?.code).toBe(REFUSED_ADDRESS_CODE)
      expect((await lookup(mapped, true)).error).toBeNull()
    }))
})
