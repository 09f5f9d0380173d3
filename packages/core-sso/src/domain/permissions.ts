/** Every application supports it; without it a user cannot sign in to the application. */
export const SIGNIN = "signin"

/** Held by the push user on an application that takes pushes, so the receiver can tell pushes are genuine. */
export const USER_UPDATE_PERMISSION = "user_update_permission"

/** On the SSO's own application: may manage users and their permissions (the admin API and pages). */
export const ADMIN = "admin"

/** On the SSO's own application: may manage everything, applications, API users and administrators included. */
export const SUPERADMIN = "superadmin"

/** What a user may do on the sign-on itself, by the permissions they hold on its own application. */
export type Role = "superadmin" | "admin" | "user"

export const roleOf = (ssoPermissions: ReadonlyArray<string> | undefined): Role =>
  ssoPermissions?.includes(SUPERADMIN) === true ? "superadmin" : ssoPermissions?.includes(ADMIN) === true ? "admin" : "user"

/** The SSO's own application, holding the roles `admin` and `superadmin`. */
export const SSO_APPLICATION = "sso"

/** The services other cores guard their APIs with, created at first start with the SSO's own application. */
export const SERVICE_APPLICATIONS = ["email-alert-api", "link-checker-api"] as const

/** What each service's application knows beyond `signin`: on link-checker-api, `admin` sees every caller's batches. */
export const SERVICE_PERMISSIONS: { readonly [Name in (typeof SERVICE_APPLICATIONS)[number]]: ReadonlyArray<string> } = {
  "email-alert-api": [],
  "link-checker-api": [ADMIN]
}

/** A permission name: 1 to 100 printable characters without spaces. */
export const isPermissionName = (name: string): boolean => /^[\x21-\x7e]{1,100}$/.test(name)

/** Distinct and sorted, as `/user.json` and pushes list them. */
export const normalisePermissions = (permissions: Iterable<string>): ReadonlyArray<string> =>
  [...new Set(permissions)].sort()
