import { SIGNIN } from "./permissions"
import type { Application, User } from "./records"

/**
 * Why the user may not use the application now, or `undefined` when they may. The SQL store's refresh grant
 * (`exchangeRefreshToken`) checks the same in its statement; the shared storage suite holds the two together.
 */
export const accessProblem = (
  user: User,
  application: Application,
  permissions: ReadonlyArray<string>
): string | undefined =>
  user.suspendedAt !== null
    ? "The user is suspended"
    : application.retired
    ? "The application is retired"
    : !permissions.includes(SIGNIN)
    ? "The user does not have permission to sign in to this application"
    : undefined
