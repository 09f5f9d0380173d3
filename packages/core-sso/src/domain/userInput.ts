import { isPermissionName } from "./permissions"

/** Text a person typed: no control characters or halves of a surrogate pair, trimmed, within a length. */
export const textProblem = (value: string, options: { readonly min: number; readonly max: number }) =>
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f]/.test(value)
    ? "must not contain control characters"
    : /\p{Cs}/u.test(value)
    ? "must be valid Unicode text"
    : value.trim().length < options.min
    ? options.min === 1 ? "must not be blank" : `must be at least ${options.min} characters`
    : value.length > options.max
    ? `must be at most ${options.max} characters`
    : undefined

/** A deliberately loose address check: one `@` with text either side, no spaces; delivery is the real test. */
export const emailProblem = (email: string) =>
  email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email) || textProblem(email, { min: 3, max: 254 }) !== undefined
    ? "must be an email address"
    : undefined

export const permissionsProblem = (permissions: ReadonlyArray<string>) =>
  permissions.every(isPermissionName) ? undefined : "must be names of 1 to 100 printable characters without spaces"

export const absoluteHttpUrlProblem = (uri: string) =>
  URL.canParse(uri) && ["http:", "https:"].includes(new URL(uri).protocol) ? undefined : "must be an absolute http(s) URL"
