/** Every application supports it; without it a user cannot sign in to the application. */
export const SIGNIN = "signin"

/** Held by the push user on an application that takes pushes, so the receiver can tell pushes are genuine. */
export const USER_UPDATE_PERMISSION = "user_update_permission"

/** On the SSO's own application: may use the admin API. */
export const ADMIN = "admin"

/** The SSO's own application, holding the `admin` permission. */
export const SSO_APPLICATION = "sso"

/** A permission name: 1 to 100 printable characters without spaces. */
export const isPermissionName = (name: string): boolean => /^[\x21-\x7e]{1,100}$/.test(name)

/** Distinct and sorted, as `/user.json` and pushes list them. */
export const normalisePermissions = (permissions: Iterable<string>): ReadonlyArray<string> =>
  [...new Set(permissions)].sort()
