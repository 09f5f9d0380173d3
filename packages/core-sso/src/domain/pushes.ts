import type { Application, User } from "./records"

export type PushKind = "update" | "reauth"

/** A user's permissions on each application, by application name: the `permissions` of the full user object. */
export type PermissionsByApplication = Readonly<Record<string, ReadonlyArray<string>>>

const joinPath = (base: string, path: string) => `${base.replace(/\/+$/, "")}${path}`

/** Where a push goes: the seed's paths under the application's home URI, or the paths gds-sso mounts at its origin. */
export const pushUrl = (application: Application, uid: string, kind: PushKind): string => {
  const user = `/users/${encodeURIComponent(uid)}`
  const path = kind === "reauth" ? `${user}/reauth` : user
  return application.pushFormat === "gds-sso"
    ? joinPath(new URL(application.homeUri).origin, `/auth/gds/api${path}`)
    : joinPath(application.homeUri, path)
}

/**
 * The body of an update push: the full user object for the `seed` format, the application's own `/user.json` body
 * for `gds-sso`.
 */
export const updateBody = (application: Application, user: User, permissions: PermissionsByApplication) => {
  const common = {
    uid: user.uid,
    name: user.name,
    email: user.email,
    organisation_slug: user.organisationSlug,
    organisation_content_id: user.organisationContentId,
    disabled: user.suspendedAt !== null
  }
  return application.pushFormat === "gds-sso"
    ? { user: { ...common, permissions: permissions[application.name] ?? [] } }
    : { user: { ...common, permissions } }
}
