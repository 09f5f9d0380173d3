import { once } from "node:events"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startInProcessServer } from "./inProcessServer"
import { startCli } from "./serverProcess"
import { writeBootstrap } from "./sso/bootstrap"

let dataDir: string

beforeAll(async () => {
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-sso-cli-"))
})
afterAll(async () => {
  if (dataDir !== undefined) await Fs.rm(dataDir, { recursive: true, force: true })
})

/** Runs `civicstack sso <args>` on the test's data directory to the end. */
const sso = async (...args: ReadonlyArray<string>) => {
  const cli = await startCli(["sso", ...args], { DATA_DIR: dataDir })
  const closed = once(cli.child, "close")
  let stdout = ""
  cli.child.stdout?.on("data", (chunk: Buffer) => { stdout += chunk.toString() })
  const [exitCode] = await Promise.all([cli.exited, closed])
  return { exitCode, stdout, output: cli.output() }
}

// Answers are checked field by field; `any` keeps those assertions readable.
const parsed = (stdout: string): any => JSON.parse(stdout)

describe("civicstack sso", () => {
  it("creates an application, a user, grants, issues and revokes a token, lists users, refuses unknown users", { timeout: 120_000 }, async () => {
    const app = await sso("create-app", "--name", "Publisher", "--home-uri", "https://publisher.example",
      "--redirect-uri", "https://publisher.example/cb", "--permission", "editor", "--json")
    expect(app.exitCode, app.output).toBe(0)
    expect(parsed(app.stdout)).toMatchObject({ name: "Publisher", client_id: expect.stringMatching(/^[0-9a-f]{32}$/) })

    const user = await sso("create-user", "--email", "ada@example.com", "--name", "Ada", "--json")
    expect(user.exitCode, user.output).toBe(0)
    expect(parsed(user.stdout).password).toHaveLength(24)

    const granted = await sso("grant", "--email", "ada@example.com", "--application", "Publisher",
      "--permission", "signin", "--permission", "editor", "--json")
    expect(parsed(granted.stdout).user.permissions).toEqual({ Publisher: ["editor", "signin"] })

    const forPerson = await sso("issue-token", "--email", "ada@example.com", "--application", "Publisher")
    expect(forPerson.exitCode).toBe(2)
    expect(forPerson.output).toContain("API tokens are issued only to API users")
    const bot = await sso("create-user", "--email", "bot@example.com", "--name", "Bot", "--api-user", "--json")
    expect(bot.exitCode, bot.output).toBe(0)
    await sso("grant", "--email", "bot@example.com", "--application", "Publisher", "--permission", "signin")
    const token = await sso("issue-token", "--email", "bot@example.com", "--application", "Publisher", "--expires-in", "3600", "--json")
    const issued = parsed(token.stdout)
    expect(issued.access_token).toMatch(/^[0-9a-f]{32}$/)
    const revoked = await sso("revoke-token", "--id", issued.id)
    expect(revoked.exitCode, revoked.output).toBe(0)

    const listed = await sso("list-users")
    expect(listed.stdout).toContain("ada@example.com  Ada")
    expect(listed.stdout).toContain("[Publisher: editor signin]")

    const unknown = await sso("suspend", "--email", "nobody@example.com", "--reason", "x")
    expect(unknown.exitCode).toBe(2)
    expect(unknown.output).toContain("No such user")
    const taken = await sso("create-user", "--email", "ADA@example.com", "--name", "Again")
    expect(taken.exitCode).toBe(2)
    expect(taken.output).toContain("That email is already taken")
  })
  it("reset-2sv removes a user's two-step verification, and says so when there was none", { timeout: 120_000 }, async () => {
    const bootstrap = await writeBootstrap({
      users: [{ email: "otto@example.com", name: "Otto", password: "a password for otto", otp_secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" }]
    })
    try {
      const server = await startInProcessServer({ DATA_DIR: dataDir, CIVICSTACK_BOOTSTRAP: bootstrap.file, SERVICES: "sso" })
      await server.close()
    } finally {
      await bootstrap.remove()
    }
    const reset = await sso("reset-2sv", "--email", "otto@example.com", "--json")
    expect(reset.exitCode, reset.output).toBe(0)
    expect(parsed(reset.stdout)).toEqual({ email: "otto@example.com", two_step_removed: true })
    const again = await sso("reset-2sv", "--email", "otto@example.com")
    expect(again.exitCode, again.output).toBe(0)
    expect(again.stdout).toContain("otto@example.com had no two-step verification")
    const unknown = await sso("reset-2sv", "--email", "nobody@example.com")
    expect(unknown.exitCode).toBe(2)
  })
})
