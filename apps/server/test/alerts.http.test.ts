import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ALERTS_TOKEN, alertsCallerBootstrap, alertsFetch, NO_ALERTS_TOKEN, OTHER_ALERTS_TOKEN } from "./alertsCaller"
import { type InProcessServer, startInProcessServer } from "./inProcessServer"
import { readOutbox, until } from "./outbox"

let caller: Awaited<ReturnType<typeof alertsCallerBootstrap>>
let server: InProcessServer

beforeAll(async () => {
  caller = await alertsCallerBootstrap()
  server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, SERVICES: "sso,alerts" })
})
afterAll(async () => {
  await server?.close()
  await caller?.remove()
})

const outbox = () => readOutbox(server.dataDir)

const post = async (path: string, body: unknown) => {
  const response = await alertsFetch(`${server.url}${path}`, { body })
  return { status: response.status, body: await response.json() as Record<string, any> }
}

describe("the email alert API in the reference server", () => {
  it("takes only a bearer token of a user with signin on email-alert-api; /healthcheck is open", async () => {
    const without = await fetch(`${server.url}/subscriber-lists/anything`)
    expect(without.status).toBe(401)
    expect(without.headers.get("www-authenticate")).toMatch(/^Bearer /)
    expect(await without.json()).toMatchObject({ error: expect.any(String) })

    const unknown = await alertsFetch(`${server.url}/subscriber-lists/anything`, { token: "0".repeat(32) })
    expect(unknown.status).toBe(401)
    const forbidden = await alertsFetch(`${server.url}/subscriber-lists/anything`, { token: NO_ALERTS_TOKEN })
    expect(forbidden.status).toBe(403)
    expect(await forbidden.json()).toEqual({ error: expect.stringContaining("email-alert-api") })
    const allowed = await alertsFetch(`${server.url}/subscriber-lists/anything`, { token: ALERTS_TOKEN })
    expect(allowed.status).toBe(404)

    const health = await fetch(`${server.url}/healthcheck`)
    expect(health.status).toBe(200)
    expect(health.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(await health.json()).toEqual({
      checks: { queue_size: { status: "ok" }, queue_age: { status: "ok" }, delivery: { status: "ok" } },
      status: "ok"
    })
  })

  it("sends one email per subscriber for a notification, even to one reached through two lists", async () => {
    const news = await post("/subscriber-lists", { title: "Tax news", tags: { topics: ["tax"] } })
    const vat = await post("/subscriber-lists", { title: "VAT", tags: { topics: { any: ["vat"] } } })
    expect([news.status, vat.status]).toEqual([201, 201])
    for (const [address, list] of [["both@example.org", news], ["both@example.org", vat], ["vat@example.org", vat]] as const) {
      expect((await post("/subscriptions", { address, subscriber_list_id: list.body.subscriber_list.id })).status).toBe(201)
    }
    const queued = await post("/notifications", { subject: "VAT on tax", body: "Rates change.", tags: { topics: ["tax", "vat"] } })
    expect(queued).toEqual({ status: 202, body: { message: "Notification queued for sending" } })

    const sent = await until(outbox, (messages) => messages.filter((m) => m.subject === "VAT on tax").length >= 2, "the emails")
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const about = (await outbox()).filter((message) => message.subject === "VAT on tax")
    expect(about.map((message) => message.to).sort()).toEqual(["both@example.org", "vat@example.org"])
    const toBoth = sent.find((message) => message.to === "both@example.org")!
    // one unsubscribe link per matching subscription
    expect(toBoth.text.match(/\/email\/unsubscribe\//g)).toHaveLength(2)
    const toOne = about.find((message) => message.to === "vat@example.org")!
    expect(toOne.headers["List-Unsubscribe"]).toMatch(/^<http:\/\/localhost:3000\/email\/unsubscribe\/[0-9a-f-]{36}>$/)

    const again = await post("/notifications", { subject: "VAT on tax", body: "Rates change.", tags: { topics: ["tax", "vat"] } })
    expect(again.status).toBe(202)
  })

  it("emails an auth token whose link keeps the destination's query", async () => {
    await post("/subscriptions", {
      address: "reader@example.org",
      subscriber_list_id: (await post("/subscriber-lists", { title: "Reader's list", tags: { topics: ["reading"] } })).body.subscriber_list.id
    })
    const answered = await post("/subscribers/auth-token", { address: "reader@example.org", destination: "/email/manage?from=alert" })
    expect(answered.status).toBe(201)
    const [message] = await until(
      async () => (await outbox()).filter((each) => each.to === "reader@example.org" && each.subject === "Confirm your email address"),
      (messages) => messages.length === 1,
      "the auth-token email"
    )
    expect(message!.text).toMatch(/http:\/\/localhost:3000\/email\/manage\?from=alert&token=[\w-]+\.[\w-]+\.[\w-]+/)

    // a flood for one address: four more are sent, then 429 with Retry-After, and no more emails
    const flood = await Promise.all(Array.from({ length: 40 }, () =>
      alertsFetch(`${server.url}/subscribers/auth-token`, { body: { address: "reader@example.org", destination: "/email/manage" } })
    ))
    const statuses = flood.map((response) => response.status)
    expect(statuses.filter((status) => status === 201).length).toBeLessThanOrEqual(4)
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(36)
    expect(Number(flood.find((response) => response.status === 429)!.headers.get("retry-after"))).toBeGreaterThan(3000)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const confirmations = (await outbox()).filter((each) => each.to === "reader@example.org" && each.subject === "Confirm your email address")
    expect(confirmations.length).toBeLessThanOrEqual(5)
  })

  it("answers malformed requests 4xx in the envelope, never 500", async () => {
    for (const [method, path, body] of [
      ["GET", "/subscribers/abc/subscriptions", undefined],
      ["GET", "/subscribers/-1/subscriptions", undefined],
      ["PATCH", "/subscriptions/x", { frequency: "hourly" }],
      ["POST", "/subscriptions", { address: "not an address", subscriber_list_id: 1 }],
      ["GET", "/subscriber-lists?tags[a][some][]=b", undefined]
    ] as const) {
      const response = await alertsFetch(`${server.url}${path}`, { method, ...(body === undefined ? {} : { body }) })
      expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400)
      expect(response.status, `${method} ${path}`).toBeLessThan(500)
      expect(await response.json()).toMatchObject({ error: expect.any(String) })
    }
  })

  it("publishes its OpenAPI document with the bearer scheme", async () => {
    const document = await (await fetch(`${server.url}/openapi/alerts.json`)).json() as {
      paths: Record<string, unknown>
      components: { securitySchemes: Record<string, { scheme?: string }> }
    }
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/subscriber-lists", "/notifications", "/healthcheck"]))
    expect(Object.values(document.components.securitySchemes)).toContainEqual(expect.objectContaining({ scheme: "bearer" }))
  })
})

describe("auth-token requests per caller", () => {
  let limited: InProcessServer
  beforeAll(async () => {
    limited = await startInProcessServer({
      CIVICSTACK_BOOTSTRAP: caller.file,
      SERVICES: "sso,alerts",
      ALERTS_AUTH_TOKENS_PER_CALLER: "3"
    })
  })
  afterAll(() => limited?.close())

  const ask = (address: string, token = ALERTS_TOKEN) =>
    alertsFetch(`${limited.url}/subscribers/auth-token`, { token, body: { address, destination: "/email/manage" } })

  it("answers a caller 429 with Retry-After once it asked for its hourly number, before looking the address up; another caller goes on", async () => {
    const list = await alertsFetch(`${limited.url}/subscriber-lists`, { body: { title: "Flood", tags: { topics: ["flood"] } } })
    const listId = (await list.json() as { subscriber_list: { id: number } }).subscriber_list.id
    const addresses = Array.from({ length: 6 }, (_, index) => `flood-${index}@example.org`)
    for (const address of addresses) {
      expect((await alertsFetch(`${limited.url}/subscriptions`, { body: { address, subscriber_list_id: listId } })).status).toBe(201)
    }

    const flood = await Promise.all(addresses.slice(0, 5).map((address) => ask(address)))
    expect(flood.map((response) => response.status).sort()).toEqual([201, 201, 201, 429, 429])
    const refused = flood.find((response) => response.status === 429)!
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500)
    expect(await refused.json()).toEqual({ error: expect.stringContaining("try again later") })
    // an unknown address is refused the same: a spent caller cannot learn which addresses are subscribers
    expect((await ask("nobody@example.org")).status).toBe(429)

    expect((await ask(addresses[5]!, OTHER_ALERTS_TOKEN)).status).toBe(201)
    const sent = await until(
      async () => (await readOutbox(limited.dataDir)).filter((each) => each.subject === "Confirm your email address"),
      (messages) => messages.length >= 4,
      "the auth-token emails"
    )
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect((await readOutbox(limited.dataDir)).filter((each) => each.subject === "Confirm your email address")).toHaveLength(sent.length)
    expect(sent).toHaveLength(4)
  })
})
