import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { layerMemory, workers } from "../../src/layers"
import { MemoryOutbox } from "../../src/services/Mailer"
import { Directory } from "../../src/services/Directory"
import { OAuthServer } from "../../src/services/OAuthServer"
import { SignIn } from "../../src/services/SignIn"
import { startPushReceiver } from "../fixtures/pushReceiver"
import type { ReceivedPush } from "../fixtures/pushReceiver"
import { eventuallyEffect } from "../fixtures/eventually"
import { codeFor, exchangeCode, origin, PASSWORD, REDIRECT_URI } from "../fixtures/harness"

let receiver: Awaited<ReturnType<typeof startPushReceiver>>
beforeAll(async () => {
  receiver = await startPushReceiver()
})
afterAll(() => receiver.close())

/** The SSO with its push sender running. */
const ssoWithWorkers = () => {
  const service = layerMemory({ allowPrivateAddresses: true })
  return Layer.merge(service, workers.pipe(Layer.provide(service), Layer.provide(MemoryOutbox.layer)))
}

const eventually = (done: () => boolean, seconds = 600) => eventuallyEffect(Effect.sync(done), seconds)

/** An application taking pushes in `format`, and Ada, signed in to it once so that it receives her changes. */
const pushingApplication = (name: string, format: "seed" | "gds-sso") =>
  Effect.gen(function*() {
    const directory = yield* Directory
    const { clientId, clientSecret } = yield* directory.createApplication({
      name,
      homeUri: `${receiver.url}/${name}`,
      redirectUris: [REDIRECT_URI],
      permissions: ["editor"],
      pushUpdates: true,
      pushFormat: format
    })
    const ada = yield* directory.createUser({ email: `ada@${name}.example`, name: "Ada", password: PASSWORD })
    yield* directory.setPermissions(ada.user.uid, name, ["signin"])
    // signing in to the application once makes it one she has used
    yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId, {}, `ada@${name}.example`))
    return { clientId, clientSecret, uid: ada.user.uid }
  })

const pushesTo = (prefix: string) => receiver.received.filter((push) => push.path.startsWith(prefix))

/** The push's bearer token is one the receiver can check with /user.json, holding user_update_permission. */
const expectGenuine = (push: ReceivedPush) =>
  Effect.gen(function*() {
    const server = yield* OAuthServer
    const { user } = yield* server.user(origin(push.authorization), undefined)
    expect(user.permissions).toContain("user_update_permission")
  })

describe("pushes to client applications", () => {
  it.effect("a permission change is PUT to /users/{uid} with the full user object (seed format)", () =>
    Effect.gen(function*() {
      const { uid } = yield* pushingApplication("seedapp", "seed")
      yield* (yield* Directory).setPermissions(uid, "seedapp", ["signin", "editor"])
      yield* eventually(() => pushesTo(`/seedapp/users/${uid}`).some((push) => JSON.stringify(push.body).includes("editor")))
      const push = pushesTo(`/seedapp/users/${uid}`).at(-1)!
      expect(push.method).toBe("PUT")
      expect(push.body).toEqual({
        user: {
          uid,
          name: "Ada",
          email: "ada@seedapp.example",
          permissions: { seedapp: ["editor", "signin"] },
          organisation_slug: null,
          organisation_content_id: null,
          disabled: false
        }
      })
      yield* expectGenuine(push)
    }).pipe(Effect.provide(ssoWithWorkers())))

  it.effect("gds-sso format: PUT /auth/gds/api/users/{uid} with the /user.json body; suspension adds a reauth", () =>
    Effect.gen(function*() {
      const { uid } = yield* pushingApplication("gdsapp", "gds-sso")
      yield* (yield* Directory).suspend(uid, "Left")
      const path = `/auth/gds/api/users/${uid}`
      yield* eventually(() =>
        receiver.received.some((push) => push.path === path && push.method === "PUT") &&
        receiver.received.some((push) => push.path === `${path}/reauth` && push.method === "POST")
      )
      const update = receiver.received.find((push) => push.path === path)!
      expect(update.body).toMatchObject({ user: { uid, permissions: ["signin"], disabled: true } })
      yield* expectGenuine(update)
    }).pipe(Effect.provide(ssoWithWorkers())))

  it.effect("signing out sends a reauth to every application the user has used", () =>
    Effect.gen(function*() {
      const directory = yield* Directory
      const app = yield* directory.createApplication({
        name: "Publisher",
        homeUri: `${receiver.url}/publisher`,
        redirectUris: ["https://publisher.example/auth/callback"],
        pushUpdates: true
      })
      const ada = yield* directory.createUser({ email: "ada@example.com", name: "Ada", password: PASSWORD })
      yield* directory.setPermissions(ada.user.uid, "Publisher", ["signin"])
      yield* exchangeCode(app.clientId, app.clientSecret, yield* codeFor(app.clientId))
      const signIn = yield* SignIn
      const session = yield* signIn.signIn({ email: "ada@example.com", password: PASSWORD, address: "192.0.2.1" })
      yield* signIn.signOut(session.sessionId)
      yield* eventually(() => pushesTo(`/publisher/users/${ada.user.uid}/reauth`).length === 1)
    }).pipe(Effect.provide(ssoWithWorkers())))

  it.effect("a receiver failing with 503 gets the push again later, and the latest state wins", () =>
    Effect.gen(function*() {
      const { uid } = yield* pushingApplication("flaky", "seed")
      const directory = yield* Directory
      receiver.answerWith(503)
      yield* directory.setPermissions(uid, "flaky", ["signin", "editor"])
      yield* eventually(() => pushesTo(`/flaky/users/${uid}`).length >= 1)
      yield* directory.setPermissions(uid, "flaky", ["signin"])
      yield* directory.updateUser(uid, { name: "Ada King" })
      receiver.answerWith(200)
      yield* eventually(() =>
        pushesTo(`/flaky/users/${uid}`).some((push) => JSON.stringify(push.body).includes("Ada King"))
      )
      const last = pushesTo(`/flaky/users/${uid}`).at(-1)!
      expect(last.body).toMatchObject({ user: { name: "Ada King", permissions: { flaky: ["signin"] } } })
      const attempts = directory.events({ userUid: uid }).pipe(
        Effect.map((events) => events.filter((event) => event.kind === "push"))
      )
      // the attempt is logged once its answer is back, which may be after the receiver saw the request
      yield* eventuallyEffect(Effect.map(attempts, (pushes) => pushes.some((event) => event.detail["outcome"] === "delivered")))
      expect((yield* attempts).some((event) => event.detail["status"] === 503)).toBe(true)
    }).pipe(Effect.provide(ssoWithWorkers())))
})
