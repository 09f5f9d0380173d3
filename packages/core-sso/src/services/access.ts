import { Effect, Option } from "effect"
import type { Context } from "effect"
import { accessProblem } from "../domain/access"
import { roleOf, SSO_APPLICATION } from "../domain/permissions"
import type { Role } from "../domain/permissions"
import type { Application } from "../domain/records"
import type { SsoStore } from "../storage/SsoStore"

/** The user's permissions on one application, sorted; empty when they have none. */
export const permissionsOn = (store: Context.Tag.Service<SsoStore>, userUid: string, applicationId: string) =>
  Effect.map(
    store.permissionsOf(userUid),
    (held) => held.find((entry) => entry.applicationId === applicationId)?.permissions ?? []
  )

/** The user and their permissions on the application, or why they may not use it. */
export const userAccess = (store: Context.Tag.Service<SsoStore>, userUid: string, application: Application) =>
  Effect.gen(function*() {
    const user = yield* store.userByUid(userUid)
    if (Option.isNone(user)) return { problem: "The user no longer exists" } as const
    const permissions = yield* permissionsOn(store, userUid, application.id)
    const problem = accessProblem(user.value, application, permissions)
    return problem === undefined ? { user: user.value, permissions } as const : { problem } as const
  })

/** The user's role on the sign-on, by their permissions on its own application. */
export const roleHeldBy = (store: Context.Tag.Service<SsoStore>, uid: string) =>
  Effect.gen(function*() {
    const sso = yield* store.applicationByName(SSO_APPLICATION)
    if (Option.isNone(sso)) return "user" as Role
    return roleOf(yield* permissionsOn(store, uid, sso.value.id))
  })

/** Whether the user is an administrator of the sign-on (`admin` or `superadmin`). */
export const isAdministrator = (store: Context.Tag.Service<SsoStore>, uid: string) =>
  Effect.map(roleHeldBy(store, uid), (role) => role !== "user")
