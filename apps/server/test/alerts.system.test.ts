import { defaultDeliverySettings } from "@civicstack/core-alerts"
import { Effect } from "effect"
import fc from "fast-check"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "@civicstack/kit/testing"
import { startTcpProxy } from "@civicstack/kit/testing"
import { startMailSink } from "./alertsSink"
import type { MailSink } from "./alertsSink"
import { startCli, stop, waitUntilReady } from "./serverProcess"
import type { ServerProcess } from "./serverProcess"
import { ALERTS_TOKEN, alertsCallerBootstrap, alertsFetch } from "./alertsCaller"

/**
 * The email alert service as operators meet it: real server processes sending through a real SMTP server, killed,
 * stopped and cut off from their database in the middle of a delivery, two copies sharing one queue, and requests
 * no client should send.
 */

const AUTH_TOKEN_SECRET = "a shared secret of the auth-token links, long enough"

let scratch: string
let bootstrap: Awaited<ReturnType<typeof alertsCallerBootstrap>>
beforeAll(async () => {
  scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-alerts-system-"))
  bootstrap = await alertsCallerBootstrap()
})
afterAll(async () => {
  await bootstrap?.remove()
  await Fs.rm(scratch, { recursive: true, force: true })
})

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A server of the SSO and the email alerts, sending through `sink` logged in as `login`. */
const serve = async (sink: MailSink, login: string, env: Record<string, string>) => {
  const server = await startCli(["serve"], {
    SERVICES: "sso,alerts",
    CIVICSTACK_BOOTSTRAP: bootstrap.file,
    EMAIL_PROVIDER: "smtp",
    SMTP_URL: sink.urlFor(login),
    ALERTS_AUTH_TOKEN_SECRET: AUTH_TOKEN_SECRET,
    SHUTDOWN_GRACE_SECONDS: "10",
    ...env
  })
  await waitUntilReady(server, 60_000)
  return server
}

const alerts = (server: ServerProcess, method: string, path: string, body?: unknown) =>
  alertsFetch(`${server.url}${path}`, { method, body })

interface SeededList {
  readonly id: number
  readonly slug: string
  readonly addresses: ReadonlyArray<string>
}

/** A list matching the tag `topics: run`, and `count` subscribers who want its emails at once. */
const seedList = async (server: ServerProcess, run: string, count: number): Promise<SeededList> => {
  const created = await alerts(server, "POST", "/subscriber-lists", { title: `System ${run}`, tags: { topics: [run] } })
  expect(created.status).toBe(201)
  const { subscriber_list } = (await created.json()) as { subscriber_list: { id: number; slug: string } }
  const addresses = Array.from({ length: count }, (_, n) => `${run}-${n}@example.org`)
  let next = 0
  const subscribeNext = async (): Promise<void> => {
    const address = addresses[next++]
    if (address === undefined) return
    const response = await alerts(server, "POST", "/subscriptions", { address, subscriber_list_id: subscriber_list.id })
    expect(response.status).toBe(201)
    return subscribeNext()
  }
  await Promise.all(Array.from({ length: 12 }, subscribeNext))
  return { id: subscriber_list.id, slug: subscriber_list.slug, addresses }
}

const notify = async (server: ServerProcess, run: string) => {
  const response = await alerts(server, "POST", "/notifications", {
    subject: `News for ${run}`,
    body: "Something you follow has changed.",
    tags: { topics: [run] }
  })
  expect(response.status).toBe(202)
}

const untilSent = async (sink: MailSink, atLeast: number, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (sink.total() < atLeast) {
    if (Date.now() > deadline) throw new Error(`only ${sink.total()} of ${atLeast} emails accepted in ${timeoutMs} ms`)
    await pause(10)
  }
}

const logTail = (servers: ReadonlyArray<ServerProcess>) =>
  servers.map((server) =>
    server.output().split("\n").filter((line) => !line.includes("Sent HTTP response")).join("\n").slice(-6000)
  ).join("\n----\n")

/**
 * Waits until every address has a message and the server has nothing left to send (no email pending or claimed,
 * which could still go out again); then no one else got anything. Returns the addresses that got more than one.
 */
const untilEachDelivered = async (
  sink: MailSink,
  addresses: ReadonlyArray<string>,
  timeoutMs: number,
  servers: ReadonlyArray<ServerProcess>
) => {
  const deadline = Date.now() + timeoutMs
  const missing = () => addresses.filter((address) => sink.countFor(address) === 0)
  const queueSize = async () => (await readiness(servers[0]!).catch(() => undefined))?.alerts?.queue_size
  while (missing().length > 0 || (await queueSize()) !== 0) {
    if (Date.now() > deadline) {
      throw new Error(`${missing().length} of ${addresses.length} subscribers got nothing and ${await queueSize()} emails are still queued after ${timeoutMs} ms\n${logTail(servers)}`)
    }
    await pause(200)
  }
  await pause(1000)
  expect(missing()).toEqual([])
  expect(sink.recipients()).toHaveLength(addresses.length)
  return sink.duplicates()
}

const expectEachExactlyOnce = async (
  sink: MailSink,
  addresses: ReadonlyArray<string>,
  timeoutMs: number,
  servers: ReadonlyArray<ServerProcess>
) => {
  expect(await untilEachDelivered(sink, addresses, timeoutMs, servers)).toEqual([])
  expect(sink.total()).toBe(addresses.length)
}

const readiness = async (server: ServerProcess) => {
  const response = await fetch(`${server.url}/healthcheck/ready`)
  return {
    status: response.status,
    alerts: ((await response.json()) as { services?: { alerts?: { queue_size: number } } }).services?.alerts
  }
}

describe("email alerts on the embedded database, as operators meet it", () => {
  it("after kill -9 in the middle of a delivery, the restarted server sends every subscriber an email; only those in flight at the kill get two", { timeout: 150_000 }, async () => {
    const dataDir = Path.join(scratch, "killed")
    const sink = await startMailSink({ answerDelayMs: 30 })
    let server = await serve(sink, "first", { DATA_DIR: dataDir })
    try {
      const list = await seedList(server, "killed", 500)
      await notify(server, "killed")
      await untilSent(sink, 100)
      server.child.kill("SIGKILL")
      await server.exited
      // messages whose data came before the kill are still being answered: count them before the restart sends again
      await sink.settled()
      const sentAtKill = sink.total()
      const acceptedBeforeKill = new Set(sink.recipients())
      expect(sentAtKill).toBeLessThan(list.addresses.length)

      server = await serve(sink, "restarted", { DATA_DIR: dataDir })
      const restartedAt = Date.now()
      // well within the 2-minute lease: the embedded database's restart makes the emails claimed at the kill due at once
      const duplicates = await untilEachDelivered(sink, list.addresses, 60_000, [server])
      console.info(`kill -9: ${sentAtKill} sent before the kill, the rest within ${Date.now() - restartedAt} ms of the restart; ` +
        `sent twice: ${duplicates.length} (${duplicates.map(([address]) => address).join(", ")})`)
      // At least once: an email the sink accepted while the killed copy had not yet recorded it is sent again.
      // Only those unrecorded at the kill can be: the worker has at most its concurrency in flight plus
      // `sentFlushSize` sent and waiting to be marked together (the defaults); each twice at most.
      expect(duplicates.length).toBeLessThanOrEqual(defaultDeliverySettings.concurrency + defaultDeliverySettings.sentFlushSize)
      for (const [address, count] of duplicates) {
        expect({ address, count, acceptedBeforeKill: acceptedBeforeKill.has(address) })
          .toEqual({ address, count: 2, acceptedBeforeKill: true })
      }
      expect(sink.total()).toBe(list.addresses.length + duplicates.length)
    } finally {
      await stop(server)
      await sink.close()
    }
  })

  it("on SIGTERM in the middle of a delivery it exits 0 within the grace period; after a restart the rest are sent, none twice", { timeout: 120_000 }, async () => {
    const dataDir = Path.join(scratch, "stopped")
    const sink = await startMailSink({ answerDelayMs: 30 })
    let server = await serve(sink, "first", { DATA_DIR: dataDir })
    try {
      const list = await seedList(server, "stopped", 400)
      await notify(server, "stopped")
      await untilSent(sink, 80)
      const stoppingAt = Date.now()
      expect(await stop(server)).toBe(0)
      expect(Date.now() - stoppingAt).toBeLessThan(12_000)
      const sentAtStop = sink.total()
      expect(sentAtStop).toBeLessThan(list.addresses.length)

      server = await serve(sink, "restarted", { DATA_DIR: dataDir })
      const restartedAt = Date.now()
      await expectEachExactlyOnce(sink, list.addresses, 60_000, [server])
      // handed back at the stop, so sent at once rather than when their claims run out (2 minutes)
      expect(Date.now() - restartedAt).toBeLessThan(30_000)
      expect(sink.byLogin().get("restarted")).toBe(list.addresses.length - sentAtStop)
    } finally {
      await stop(server)
      await sink.close()
    }
  })

  it("a relay that refuses the service as a sender ends no subscription: delivery pauses, the health check says so", { timeout: 60_000 }, async () => {
    const sink = await startMailSink({ answerDelayMs: 0, refuseRecipients: { code: 550, text: "5.7.1 Relaying denied" } })
    const server = await serve(sink, "refused", { DATA_DIR: Path.join(scratch, "relay-refused") })
    try {
      const created = await alerts(server, "POST", "/subscriber-lists", { title: "Relay refused", tags: { topics: ["refused"] } })
      const { subscriber_list: list } = (await created.json()) as { subscriber_list: { id: number } }
      const subscriptionIds: Array<string> = []
      for (let n = 0; n < 5; n++) {
        const subscribed = await alerts(server, "POST", "/subscriptions", { address: `refused-${n}@example.org`, subscriber_list_id: list.id })
        expect(subscribed.status).toBe(201)
        subscriptionIds.push(((await subscribed.json()) as { id: string }).id)
      }
      await notify(server, "refused")
      const health = async () => (await (await fetch(`${server.url}/healthcheck`)).json()) as Record<string, any>
      const deadline = Date.now() + 30_000
      while ((await health()).checks.delivery.status !== "critical") {
        if (Date.now() > deadline) throw new Error(`delivery never paused\n${logTail([server])}`)
        await pause(100)
      }
      expect(sink.refusals()).toBeGreaterThan(0)
      expect(sink.total()).toBe(0)
      for (const id of subscriptionIds) {
        const found = await alerts(server, "GET", `/subscriptions/${id}`)
        expect(found.status).toBe(200)
        const { subscription } = (await found.json()) as {
          subscription: { ended_at: string | null; ended_reason: string | null; subscriber: { deactivated_at: string | null } }
        }
        expect(subscription).toMatchObject({ ended_at: null, ended_reason: null, subscriber: { deactivated_at: null } })
      }
      expect(server.output()).toMatch(/Relaying denied/)
    } finally {
      await stop(server)
      await sink.close()
    }
  })

  it("answers random requests to every alerts endpoint without a 5xx, and changes nothing", { timeout: 120_000 }, async () => {
    const sink = await startMailSink({ answerDelayMs: 0 })
    const server = await serve(sink, "sweep", { DATA_DIR: Path.join(scratch, "sweep") })
    try {
      const list = await seedList(server, "sweep", 1)
      const subscribed = await alerts(server, "POST", "/subscriptions", { address: "sweep-0@example.org", subscriber_list_id: list.id })
      expect(subscribed.status).toBe(200)
      const { subscription } = (await subscribed.json()) as { subscription: { id: string; subscriber_id: number } }
      const subscriberId = subscription.subscriber_id
      const view = async () => {
        const read = async (path: string) => {
          const response = await alerts(server, "GET", path)
          return { status: response.status, body: (await response.json()) as unknown }
        }
        return {
          list: await read(`/subscriber-lists/${list.slug}`),
          byCriteria: await read(`/subscriber-lists?tags[topics][]=sweep`),
          subscriptions: await read(`/subscribers/${subscriberId}/subscriptions`),
          subscription: await read(`/subscriptions/${subscription.id}`),
          queue: (await readiness(server)).alerts
        }
      }
      const before = await view()
      expect(before.subscriptions.status).toBe(200)
      expect(before.queue).toEqual(expect.objectContaining({ queue_size: 0 }))

      const seededIds = new Set([String(list.id), String(subscriberId), subscription.id, list.slug])
      const segment = fc.oneof(
        fc.string(),
        fc.integer().map(String),
        fc.uuid(),
        fc.constantFrom("%00", "..", "%2e%2e", "%ZZ", "-1", "1e3", "99999999999999999999", "__proto__", "%F0%9F%92%A9", ""),
        fc.string({ unit: "binary" }).map(encodeURIComponent)
      ).filter((text) => {
        // never one of the seeded records: a request to those may be a valid change
        const decoded = decodeURIComponentSafely(text)
        return !seededIds.has(text) && !seededIds.has(decoded) && !seededIds.has(String(Number(decoded.trim())))
      })
      // every endpoint, mostly with its own method so that most requests reach a handler
      const anyMethod = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD")
      const endpoint = (method: string, path: fc.Arbitrary<string>) =>
        fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constant(method) }, anyMethod), path)
      const fixed = (path: string) => fc.constant(path)
      const request = fc.oneof(
        endpoint("POST", fixed("/subscriber-lists")),
        endpoint("GET", fixed("/subscriber-lists")),
        endpoint("GET", segment.map((slug) => `/subscriber-lists/${slug}`)),
        endpoint("POST", fixed("/notifications")),
        endpoint("POST", fixed("/content-changes")),
        endpoint("GET", segment.map((id) => `/subscribers/${id}/subscriptions`)),
        endpoint("PATCH", segment.map((id) => `/subscribers/${id}`)),
        endpoint("DELETE", segment.map((id) => `/subscribers/${id}`)),
        endpoint("POST", fixed("/subscriptions")),
        endpoint("GET", segment.map((id) => `/subscriptions/${id}`)),
        endpoint("PATCH", segment.map((id) => `/subscriptions/${id}`)),
        endpoint("POST", segment.map((id) => `/unsubscribe/${id}`)),
        endpoint("POST", fixed("/subscribers/auth-token")),
        endpoint("GET", fixed("/healthcheck"))
      )
      const queryKey = fc.oneof(
        fc.constantFrom("tags[topics][]", "tags[topics][any][]", "links[x][all][]", "tags[__proto__][]", "tags[constructor][prototype][]",
          "document_type", "content_id", "tags", "tags[a][b][c][d][]", "links[]"),
        fc.string()
      )
      const query = fc.array(fc.tuple(queryKey, fc.string()), { maxLength: 4 })
        .map((pairs) => pairs.length === 0 ? "" : `?${new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString()}`)
      // bodies that can never be a valid request: wrong types in the fields that matter, or no JSON at all
      const notText = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }))
      const jsonBody = fc.oneof(
        fc.jsonValue().filter((value) => typeof value !== "object" || value === null || Array.isArray(value)),
        fc.dictionary(fc.string({ minLength: 13 }), fc.jsonValue(), { maxKeys: 4 }),
        notText.map((address) => ({ address, subscriber_list_id: list.id })),
        notText.map((title) => ({ title, tags: { topics: ["sweep-new"] } })),
        fc.jsonValue().map((tags) => ({ subject: 1, body: "x", tags })),
        notText.map((frequency) => ({ frequency })),
        notText.map((new_address) => ({ new_address })),
        fc.tuple(notText, fc.string()).map(([address, destination]) => ({ address, destination: `//${destination}` })),
        fc.jsonValue().map((criteria) => ({ title: "Sweep", tags: { topics: criteria }, links: 7 }))
      ).map((value) => ({ contentType: "application/json", text: JSON.stringify(value) }))
      const body = fc.oneof(
        jsonBody,
        fc.string().map((text) => ({ contentType: "application/json", text: `{${text}` })),
        fc.string().map((text) => ({ contentType: "text/plain", text })),
        fc.constant(undefined)
      )
      const authorization = fc.oneof(
        { weight: 8, arbitrary: fc.constant(`Bearer ${ALERTS_TOKEN}`) },
        fc.constantFrom(undefined, "Bearer ", `Basic ${ALERTS_TOKEN}`, "Bearer 0000000000000000000000000000000000"),
        fc.string().map((text) => `Bearer ${text.replace(/[^\x20-\x7e]/g, "")}`)
      )

      const answered: Record<number, number> = {}
      await fc.assert(
        fc.asyncProperty(request, query, body, authorization, async ([method, path], query, body, authorization) => {
          const withBody = body !== undefined && method !== "GET" && method !== "HEAD"
          const response = await fetch(`${server.url}${path}${query}`, {
            method,
            headers: {
              ...(authorization === undefined ? {} : { authorization }),
              ...(withBody ? { "content-type": body.contentType } : {})
            },
            ...(withBody ? { body: body.text } : {}),
            signal: AbortSignal.timeout(10_000)
          }).catch((error: Error) => {
            throw new Error(`${method} ${path}${query} ${withBody ? body.text : ""}: no answer (${error.name})`)
          })
          await response.arrayBuffer()
          answered[response.status] = (answered[response.status] ?? 0) + 1
          if (response.status >= 500) {
            throw new Error(`${method} ${path}${query} ${withBody ? body.text : ""} answered ${response.status}`)
          }
        }),
        { numRuns: 400 }
      )
      console.info(`bad-input sweep: statuses ${JSON.stringify(answered)}`)

      expect(await view()).toEqual(before)
      await pause(1500)
      expect(sink.total()).toBe(0)
      expect(server.output()).not.toContain("\"logLevel\":\"ERROR\"")
    } finally {
      await stop(server)
      await sink.close()
    }
  })
})

const decodeURIComponentSafely = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)("email alerts on PostgreSQL, as operators meet it", () => {
  let database: { url: string; drop: () => Promise<unknown> }
  beforeAll(async () => {
    database = await createTestDatabase(process.env.TEST_DATABASE_URL!, "alerts_system", Effect.void)
  })
  afterAll(() => database?.drop())

  it("two copies on one database both send, and every subscriber gets exactly one email", { timeout: 120_000 }, async () => {
    const sink = await startMailSink({ answerDelayMs: 20 })
    const [first, second] = await Promise.all([
      serve(sink, "copy-a", { DATABASE_URL: database.url, DATA_DIR: Path.join(scratch, "copy-a") }),
      serve(sink, "copy-b", { DATABASE_URL: database.url, DATA_DIR: Path.join(scratch, "copy-b") })
    ])
    try {
      const list = await seedList(first!, "two-copies", 600)
      await notify(second!, "two-copies")
      await expectEachExactlyOnce(sink, list.addresses, 60_000, [first!, second!])
      console.info(`two copies: sent per copy ${JSON.stringify(Object.fromEntries(sink.byLogin()))}`)
      expect(sink.byLogin().get("copy-a")).toBeGreaterThan(0)
      expect(sink.byLogin().get("copy-b")).toBeGreaterThan(0)
    } finally {
      await stop(first!)
      await stop(second!)
      await sink.close()
    }
  })

  it("through a 9 s database outage in the middle of a delivery: 503 with Retry-After meanwhile, then every subscriber gets exactly one email", { timeout: 240_000 }, async () => {
    const target = new URL(database.url)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const throughProxy = new URL(database.url)
    throughProxy.host = `127.0.0.1:${proxy.port}`
    const sink = await startMailSink({ answerDelayMs: 30 })
    const server = await serve(sink, "outage", { DATABASE_URL: throughProxy.toString(), DATA_DIR: Path.join(scratch, "outage") })
    try {
      const list = await seedList(server, "outage", 400)
      await notify(server, "outage")
      await untilSent(sink, 60)
      await proxy.cut()
      await pause(1000)
      const duringOutage = await alerts(server, "GET", `/subscriber-lists/${list.slug}`)
      expect(duringOutage.status).toBe(503)
      expect(duringOutage.headers.get("retry-after")).toBe("5")
      expect((await fetch(`${server.url}/healthcheck/ready`)).status).toBe(503)
      // longer than the server's 5 s connect timeout: writes fail rather than wait
      await pause(8000)
      const sentDuringOutage = sink.total()
      await proxy.restore()
      const restoredAt = Date.now()
      await expectEachExactlyOnce(sink, list.addresses, 200_000, [server])
      console.info(`outage: ${sentDuringOutage} sent by the end of the outage, all within ${Date.now() - restoredAt} ms of the restore`)
      expect((await alerts(server, "GET", `/subscriber-lists/${list.slug}`)).status).toBe(200)
    } finally {
      await stop(server)
      await sink.close()
      await proxy.close()
    }
  })
})
