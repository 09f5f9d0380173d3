import { Effect, Metric } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fastAnswersServed } from "../src/http/fastAnswers"
import { type InProcessServer, startInProcessServer } from "./inProcessServer"
import { LINKCHECK_TOKEN, linkcheckCallerBootstrap, NO_SIGNIN_TOKEN } from "./linkcheckCaller"

let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
let server: InProcessServer

beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
  server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, SERVICES: "sso" })
})
afterAll(async () => {
  await server?.close()
  await caller?.remove()
})

const servedFast = () => Effect.runSync(Metric.value(fastAnswersServed)).count

/** Status, headers (less those of the connection, the clock and the request's own id) and body. */
const answer = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${server.url}${path}`, init)
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!["date", "connection", "keep-alive", "x-request-id"].includes(name)) headers[name] = value
  })
  return { status: response.status, headers, body: await response.text() }
}

const withToken = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

describe("GET /user.json answered from memory", () => {
  it("answers a token seen before without the HTTP stack, byte for byte as the stack does", async () => {
    const before = servedFast()
    const throughStack = await answer("/user.json", withToken(LINKCHECK_TOKEN))
    expect(throughStack.status).toBe(200)
    expect(JSON.parse(throughStack.body)).toMatchObject({ user: { email: "links@example.com", permissions: ["signin"] } })
    expect(servedFast()).toBe(before)

    const fromMemory = await answer("/user.json", withToken(LINKCHECK_TOKEN))
    expect(servedFast()).toBe(before + 1)
    expect(fromMemory).toEqual(throughStack)
  })

  it("leaves every refusal and every unusual request to the stack", async () => {
    await answer("/user.json", withToken(LINKCHECK_TOKEN))
    await answer("/user.json", withToken(NO_SIGNIN_TOKEN))
    const before = servedFast()
    const refusals = [
      await answer("/user.json", withToken(NO_SIGNIN_TOKEN)),
      await answer("/user.json"),
      await answer("/user.json", withToken("0".repeat(32))),
      await answer(`/user.json?client_id=${"a".repeat(32)}`, withToken(LINKCHECK_TOKEN))
    ]
    expect(refusals.map(({ status }) => status)).toEqual([401, 401, 401, 401])
    for (const refusal of refusals) expect(refusal.headers["www-authenticate"]).toMatch(/^Bearer /)

    const unusual = [
      await answer("/user.json?client_id=a&client_id=b", withToken(LINKCHECK_TOKEN)),
      await answer("/user.json?other=1", withToken(LINKCHECK_TOKEN)),
      await answer("/user.json", { method: "HEAD", ...withToken(LINKCHECK_TOKEN) }),
      await answer("/user.json/", withToken(LINKCHECK_TOKEN))
    ]
    expect(unusual.every(({ status }) => status !== 500)).toBe(true)
    expect(servedFast()).toBe(before)
  })
})
