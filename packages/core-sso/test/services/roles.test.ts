import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { layerMemory } from "../../src/layers"
import { Actor } from "../../src/services/Actor"
import { Directory } from "../../src/services/Directory"
import { PASSWORD, publisherAndAda } from "../fixtures/harness"

/** Publisher and Ada, the sign-on's application, an admin (Alan) and a superadmin (Sue), made by the system. */
const withRoles = Effect.gen(function*() {
  const { ada } = yield* publisherAndAda
  const directory = yield* Directory
  yield* directory.createApplication({ name: "sso", homeUri: "https://sso.example", redirectUris: [], permissions: ["admin", "superadmin"] })
  const alan = yield* directory.createUser({ email: "alan@example.com", name: "Alan", password: PASSWORD })
  yield* directory.setPermissions(alan.user.uid, "sso", ["signin", "admin"])
  const sue = yield* directory.createUser({ email: "sue@example.com", name: "Sue", password: PASSWORD, admin: true })
  return { directory, ada, alan: alan.user, sue: sue.user }
})

const as = (user: { readonly uid: string; readonly email: string }) =>
  Effect.provideService(Actor, { kind: "administrator", uid: user.uid, email: user.email })

describe("roles", () => {
  it.effect("an admin manages users and their permissions, but not roles, administrators, applications or API tokens", () =>
    Effect.gen(function*() {
      const { ada, alan, directory, sue } = yield* withRoles
      const granted = yield* directory.setPermissions(ada.uid, "Publisher", ["signin"]).pipe(as(alan))
      expect(granted.permissions["Publisher"]).toEqual(["signin"])
      yield* directory.suspend(ada.uid, "Left").pipe(as(alan))
      yield* directory.unsuspend(ada.uid).pipe(as(alan))
      const refusals = [
        directory.setPermissions(ada.uid, "sso", ["signin", "admin"]),
        directory.suspend(sue.uid, "Coup"),
        directory.setPermissions(sue.uid, "Publisher", ["signin"]),
        directory.setPassword(sue.uid, "a password alan chose"),
        directory.unlock(sue.uid),
        directory.createApplication({ name: "Rogue", homeUri: "https://rogue.example", redirectUris: [] }),
        directory.createUser({ email: "bot@example.com", name: "Bot", apiUser: true }),
        directory.createUser({ email: "boss@example.com", name: "Boss", admin: true })
      ]
      for (const refused of refusals) {
        expect(yield* Effect.flip(refused.pipe(as(alan)))).toMatchObject({ _tag: "NotAllowed" })
      }
      expect((yield* directory.user(sue.uid)).user.suspendedAt).toBeNull()
      expect((yield* directory.user(ada.uid)).permissions["sso"]).toBeUndefined()
    }).pipe(Effect.provide(layerMemory())))

  it.effect("a superadmin manages everything, administrators and roles included", () =>
    Effect.gen(function*() {
      const { ada, alan, directory, sue } = yield* withRoles
      yield* directory.setPermissions(ada.uid, "sso", ["signin", "admin"]).pipe(as(sue))
      yield* directory.suspend(alan.uid, "Moved on").pipe(as(sue))
      yield* directory.createApplication({ name: "Newsroom", homeUri: "https://newsroom.example", redirectUris: [] }).pipe(as(sue))
      expect((yield* directory.user(ada.uid)).permissions["sso"]).toEqual(["admin", "signin"])
      expect((yield* directory.user(alan.uid)).user.suspendedAt).not.toBeNull()
    }).pipe(Effect.provide(layerMemory())))

  it.effect("a user changes only their own account", () =>
    Effect.gen(function*() {
      const { ada, alan, directory } = yield* withRoles
      const asAda = Effect.provideService(Actor, { kind: "user", uid: ada.uid, email: ada.email })
      yield* directory.setPassword(ada.uid, "ada's own new password").pipe(asAda)
      expect(yield* Effect.flip(directory.setPassword(alan.uid, "ada sets alan's").pipe(asAda))).toMatchObject({ _tag: "NotAllowed" })
    }).pipe(Effect.provide(layerMemory())))
})
