import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

export const benchApplication = {
  name: "Bench",
  clientId: randomBytes(16).toString("hex"),
  clientSecret: randomBytes(16).toString("hex"),
  redirectUri: "https://bench.example/auth/callback"
} as const

/** The user who signs in through the pages to obtain the refresh tokens. */
export const signInUser = { email: "signer@bench.example", password: "a long enough bench password" } as const

export interface BootstrapFile {
  readonly file: string
  /** One API token of the bench application per user, for `GET /user.json`. */
  readonly apiTokens: ReadonlyArray<string>
  /** Per application of `callerApplications`, the API token of a user with `signin` on it. */
  readonly callerTokens: Readonly<Record<string, string>>
  readonly remove: () => Promise<void>
}

/**
 * A bootstrap file (see packages/core-sso/README.md) with the bench application, `users` users who may sign in to it
 * and each hold an API token for it, and the user who signs in for the refresh tokens; and, per application of
 * `callerApplications` (e.g. `email-alert-api`, which the server creates), an API user with `signin` and a token.
 */
export const writeBootstrap = async (
  users: number,
  callerApplications: ReadonlyArray<string> = []
): Promise<BootstrapFile> => {
  const permissions = { [benchApplication.name]: ["signin"] }
  const benchTokenHolders = Array.from({ length: users }, (_, index) => ({
    email: `user${index}@bench.example`,
    name: `Bench user ${index}`,
    api_user: true,
    permissions,
    application: benchApplication.name,
    token: randomBytes(16).toString("hex")
  }))
  const callers = callerApplications.map((application, index) => ({
    email: `caller${index}@bench.example`,
    name: `Bench caller of ${application}`,
    api_user: true,
    permissions: { [application]: ["signin"] },
    application,
    token: randomBytes(16).toString("hex")
  }))
  const tokenHolders = [...benchTokenHolders, ...callers]
  const document = {
    applications: [{
      name: benchApplication.name,
      home_uri: "https://bench.example",
      redirect_uris: [benchApplication.redirectUri],
      client_id: benchApplication.clientId,
      client_secret: benchApplication.clientSecret,
      permissions: ["signin"]
    }],
    users: [
      { email: signInUser.email, name: "Bench signer", password: signInUser.password, permissions },
      ...tokenHolders.map(({ application: _application, token: _token, ...user }) => user)
    ],
    api_tokens: tokenHolders.map(({ application, email, token }) => ({ user: email, application, token }))
  }
  const directory = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-bench-sso-"))
  const file = Path.join(directory, "bootstrap.json")
  await Fs.writeFile(file, JSON.stringify(document))
  return {
    file,
    apiTokens: benchTokenHolders.map(({ token }) => token),
    callerTokens: Object.fromEntries(callers.map(({ application, token }) => [application, token])),
    remove: () => Fs.rm(directory, { recursive: true, force: true })
  }
}
