import { Directory } from "@civicstack/core-sso"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, ManagedRuntime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createPushReceiver,
  createSsoGuard,
  type PushFormat,
  pushHandler,
  type PushReceiver,
  SsoGuard,
  USER_UPDATE_PERMISSION
} from "../src"
import { countingFetch, listen, type LocalServer } from "./support/httpServer"
import { apiTokenFor, applicationAndUser, type RealSso, startRealSso } from "./support/realSso"

let sso: RealSso
beforeAll(async () => {
  sso = await startRealSso()
})
afterAll(() => sso?.close())

interface Received {
  readonly updates: Array<unknown>
  readonly reauths: Array<string>
}

/**
 * A client application receiving pushes of `format`: its receiver behind node:http, as middleware, or the Effect
 * `pushHandler` in an Effect HTTP app.
 */
const startReceiver = async (format: PushFormat, mounting: "node:http" | "middleware" | "after a body parser" | "effect") => {
  const received: Received = { updates: [], reauths: [] }
  let receiver: PushReceiver | undefined
  let effectApp: { handle: (request: IncomingMessage, response: ServerResponse) => void; close: () => Promise<void> } | undefined
  const server: LocalServer = await listen((request, response) => {
    if (mounting === "effect") return effectApp === undefined ? response.end() : effectApp.handle(request, response)
    if (receiver === undefined) return response.end()
    if (mounting === "after a body parser") {
      // what express.json() does before the receiver runs: the stream is read, the parsed body is on the request
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const text = Buffer.concat(chunks).toString()
        Object.assign(request, { body: text === "" ? {} : JSON.parse(text) })
        receiver!.middleware(request, response, () => {
          response.statusCode = 404
          response.end("not a push")
        })
      })
      return
    }
    if (mounting === "middleware") {
      return receiver.middleware(request, response, () => {
        response.statusCode = 404
        response.end("not a push")
      })
    }
    void receiver.handle(request, response).then((handled) => {
      if (!handled) {
        response.statusCode = 404
        response.end("not a push")
      }
    })
  })
  const homeUri = `${server.url}/app`
  const { application, uid } = await sso.run(applicationAndUser({ homeUri, pushFormat: format }))
  receiver = createPushReceiver({
    baseUrl: sso.url,
    clientId: application.clientId,
    format,
    pathPrefix: "/app",
    onUpdate: (user) => {
      received.updates.push(user)
    },
    onReauth: (reauthUid) => {
      received.reauths.push(reauthUid)
    }
  })
  if (mounting === "effect") {
    const runtime = ManagedRuntime.make(
      SsoGuard.layer({ baseUrl: sso.url, clientId: application.clientId }).pipe(Layer.provide(FetchHttpClient.layer))
    )
    const handle = await runtime.runPromise(NodeHttpServer.makeHandler(pushHandler({
      format,
      pathPrefix: "/app",
      onUpdate: (user) => Effect.sync(() => received.updates.push(user)),
      onReauth: (reauthUid) => Effect.sync(() => received.reauths.push(reauthUid))
    }, Effect.succeed(HttpServerResponse.text("not a push", { status: 404 })))))
    effectApp = { handle, close: () => runtime.dispose() }
  }
  const pushToken = (await sso.run(apiTokenFor(application.name, ["signin", USER_UPDATE_PERMISSION]))).token
  const usersUrl = format === "gds-sso" ? `${server.url}/auth/gds/api/users` : `${homeUri}/users`
  return {
    application,
    uid,
    received,
    pushToken,
    usersUrl,
    close: async () => {
      await server.close()
      await receiver?.close()
      await effectApp?.close()
    }
  }
}

const seedUser = (uid: string, applicationName: string) => ({
  user: {
    uid,
    name: "Grace Hopper",
    email: "grace@example.com",
    permissions: { [applicationName]: ["signin", "editor"], Other: ["signin"] },
    organisation_slug: null,
    organisation_content_id: null,
    disabled: false
  }
})
const gdsUser = (uid: string) => ({ user: { ...seedUser(uid, "x").user, permissions: ["signin", "editor"] } })

const send = (url: string, method: string, token: string | undefined, body?: unknown) =>
  fetch(url, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })

const waitFor = async (condition: () => boolean, what: string) => {
  const deadline = Date.now() + 15_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

for (const format of ["seed", "gds-sso"] as const) {
  for (const mounting of ["node:http", "middleware", "effect"] as const) {
    describe(`push receiver, ${format} format, ${mounting}`, () => {
      let app: Awaited<ReturnType<typeof startReceiver>>
      beforeAll(async () => {
        app = await startReceiver(format, mounting)
      })
      afterAll(() => app?.close())
      const body = () => (format === "seed" ? seedUser(app.uid, app.application.name) : gdsUser(app.uid))

      it("accepts an update and a reauth carrying a push token the SSO vouches for", async () => {
        const updated = await send(`${app.usersUrl}/${app.uid}`, "PUT", app.pushToken, body())
        expect(updated.status).toBe(200)
        expect(app.received.updates).toEqual([body().user])
        const reauth = await send(`${app.usersUrl}/${app.uid}/reauth`, "POST", app.pushToken, {})
        expect(reauth.status).toBe(200)
        expect(app.received.reauths).toEqual([app.uid])
      })

      it("refuses a missing or unknown token with 401 and a token without user_update_permission with 403", async () => {
        const before = app.received.updates.length
        const reauthsBefore = app.received.reauths.length
        const missing = await send(`${app.usersUrl}/${app.uid}`, "PUT", undefined, body())
        expect(missing.status).toBe(401)
        expect(missing.headers.get("www-authenticate")).toBe("Bearer")
        const unknown = await send(`${app.usersUrl}/${app.uid}/reauth`, "POST", "0".repeat(32), {})
        expect(unknown.status).toBe(401)
        expect(unknown.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/)
        const signinOnly = (await sso.run(apiTokenFor(app.application.name, ["signin"]))).token
        const forbidden = await send(`${app.usersUrl}/${app.uid}`, "PUT", signinOnly, body())
        expect(forbidden.status).toBe(403)
        expect(await forbidden.json()).toEqual({ error: expect.stringContaining(USER_UPDATE_PERMISSION) })
        expect(app.received.updates.length).toBe(before)
        expect(app.received.reauths.length).toBe(reauthsBefore)
      })

      it("answers 400 with a JSON error for a body that is not the format's user, or names another uid", async () => {
        const before = app.received.updates.length
        const wrongShape = format === "seed" ? gdsUser(app.uid) : seedUser(app.uid, app.application.name)
        for (const bad of ["{not json", { user: { uid: app.uid } }, wrongShape, body().user, { user: { ...body().user, uid: "someone-else" } }]) {
          const refused = await send(`${app.usersUrl}/${app.uid}`, "PUT", app.pushToken, bad)
          expect(refused.status).toBe(400)
          expect(refused.headers.get("content-type")).toBe("application/json; charset=utf-8")
          expect(await refused.json()).toEqual({ error: expect.any(String) })
        }
        expect(app.received.updates.length).toBe(before)
      })

      it("leaves other paths to the application, and answers 405 for the wrong method", async () => {
        expect((await send(`${app.usersUrl}/${app.uid}/elsewhere`, "PUT", app.pushToken, body())).status).toBe(404)
        const wrongMethod = await send(`${app.usersUrl}/${app.uid}`, "POST", app.pushToken, body())
        expect(wrongMethod.status).toBe(405)
        expect(wrongMethod.headers.get("allow")).toBe("PUT")
      })
    })
  }
}

describe("push receiver after an Express-style body parser", () => {
  it("uses the parsed body, and still refuses one that is not a user", async () => {
    const app = await startReceiver("seed", "after a body parser")
    try {
      const body = seedUser(app.uid, app.application.name)
      expect((await send(`${app.usersUrl}/${app.uid}`, "PUT", app.pushToken, body)).status).toBe(200)
      expect(app.received.updates).toEqual([body.user])
      expect((await send(`${app.usersUrl}/${app.uid}`, "PUT", app.pushToken, { user: {} })).status).toBe(400)
      expect(app.received.updates.length).toBe(1)
    } finally {
      await app.close()
    }
  })
})

describe("push receiver body limit", () => {
  it("answers 413 for a body over the limit", async () => {
    const app = await startReceiver("gds-sso", "node:http")
    try {
      const huge = { user: { ...gdsUser(app.uid).user, name: "x".repeat(2 * 1024 * 1024) } }
      const refused = await send(`${app.usersUrl}/${app.uid}`, "PUT", app.pushToken, huge)
      expect(refused.status).toBe(413)
      expect(app.received.updates).toEqual([])
    } finally {
      await app.close()
    }
  })
})

describe("pushes sent by the SSO itself", () => {
  for (const format of ["seed", "gds-sso"] as const) {
    it(`${format}: a permission change arrives as an update, a suspension as a reauth`, async () => {
      const app = await startReceiver(format, "node:http")
      try {
        const bot = await sso.run(apiTokenFor(app.application.name, ["signin"]))
        await sso.run(Effect.flatMap(Directory, (directory) => directory.setPermissions(bot.uid, app.application.name, ["signin", "editor"])))
        await waitFor(() => app.received.updates.length > 0, "the update push")
        const expectedPermissions = format === "seed" ? { [app.application.name]: ["editor", "signin"] } : ["editor", "signin"]
        expect(app.received.updates[0]).toMatchObject({ uid: bot.uid, permissions: expectedPermissions, disabled: false })

        await sso.run(Effect.flatMap(Directory, (directory) => directory.suspend(bot.uid, "left")))
        await waitFor(() => app.received.reauths.includes(bot.uid), "the reauth push")
      } finally {
        await app.close()
      }
    }, 30_000)
  }
})

describe("push receiver given the application's guard", () => {
  it("checks pushes with it, and makes it forget the pushed user's cached tokens at once", async () => {
    const { counter, fetch: countedFetch } = countingFetch()
    const { application } = await sso.run(applicationAndUser({ homeUri: "http://127.0.0.1:9/app", pushFormat: "seed" }))
    const guard = createSsoGuard({ baseUrl: sso.url, clientId: application.clientId, fetch: countedFetch })
    const receiver = createPushReceiver({
      baseUrl: sso.url,
      clientId: application.clientId,
      format: "seed",
      guard,
      onUpdate: () => {},
      onReauth: () => {}
    })
    const server = await listen((request, response) => void receiver.handle(request, response))
    try {
      const editor = await sso.run(apiTokenFor(application.name, ["signin", "editor"]))
      const pushToken = (await sso.run(apiTokenFor(application.name, ["signin", USER_UPDATE_PERMISSION]))).token
      await guard.verify(`Bearer ${editor.token}`)
      await guard.verify(`Bearer ${editor.token}`)
      const before = counter.userRequests
      const pushed = await send(`${server.url}/users/${editor.uid}/reauth`, "POST", pushToken, {})
      expect(pushed.status).toBe(200)
      await guard.verify(`Bearer ${editor.token}`)
      // one question for the push token, one for the editor's token, forgotten by the push
      expect(counter.userRequests).toBe(before + 2)
    } finally {
      await server.close()
      await receiver.close()
      await guard.close()
    }
  })
})
