import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { count, startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { writeBootstrap } from "./sso/bootstrap"
import { adminBootstrap } from "../../../packages/core-sso/test/fixtures/adminBootstrap"


// The admin API itself is tested on the core's test host (packages/core-sso/test/http/admin.test.ts); here, the
// bootstrap file and the first start as the server applies them when it starts.
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  bootstrap = await writeBootstrap(adminBootstrap)
})
afterAll(() => bootstrap?.remove())

// Bodies are checked field by field; `any` keeps those assertions readable.
const json = (response: Response): Promise<any> => response.json()

describe("the bootstrap file", () => {
  it("applied again at the next start changes nothing", async () => {
    const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-bootstrap-twice-"))
    const counts = async (running: InProcessServer) =>
      Promise.all(["sso.applications", "sso.users", "sso.permissions", "sso.access_tokens", "sso.events"].map((table) => count(running, table)))
    try {
      const first = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: bootstrap.file, SERVICES: "sso", DATA_DIR: dataDir })
      const afterFirst = await counts(first)
      await first.close()
      const second = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: bootstrap.file, SERVICES: "sso", DATA_DIR: dataDir })
      expect(await counts(second)).toEqual(afterFirst)
      await second.close()
    } finally {
      await Fs.rm(dataDir, { recursive: true, force: true })
    }
  })

  it("an otp_secret that is not base32 stops the start, naming the field", async () => {
    const bad = await writeBootstrap({ users: [{ email: "a@example.com", name: "A", otp_secret: "not base32!" }] })
    try {
      await expect(startInProcessServer({ CIVICSTACK_BOOTSTRAP: bad.file, SERVICES: "sso" })).rejects.toThrow(/otp_secret[\s\S]*base32/)
    } finally {
      await bad.remove()
    }
  })

  it("a bad file stops the start with a message naming it", async () => {
    const bad = await writeBootstrap({ applications: [{ name: 3 }] })
    try {
      await expect(startInProcessServer({ CIVICSTACK_BOOTSTRAP: bad.file, SERVICES: "sso" })).rejects.toThrow(/CIVICSTACK_BOOTSTRAP/)
    } finally {
      await bad.remove()
    }
  })
})

describe("first start", () => {
  it("creates the sign-on's applications and accounts once and writes the secrets to a private file", async () => {
    const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-first-"))
    try {
      const first = await startInProcessServer({ SERVICES: "sso", DATA_DIR: dataDir })
      const file = Path.join(dataDir, "first-run.json")
      expect((await Fs.stat(file)).mode & 0o777).toBe(0o600)
      const { secrets } = JSON.parse(await Fs.readFile(file, "utf8")) as { secrets: Array<{ what: string; value: string }> }
      const adminToken = secrets.find(({ what }) => what.startsWith("admin API token"))!.value
      const users = await fetch(`${first.url}/admin/users`, { headers: { authorization: `Bearer ${adminToken}` } })
      expect(users.status).toBe(200)
      expect((await json(users)).users.map((user: any) => user.email)).toEqual(["admin@civicstack.local", "api@civicstack.local"])
      const serviceToken = secrets.find(({ what }) => what.endsWith("link-checker-api"))!.value
      const serviceUser = await fetch(`${first.url}/user.json`, { headers: { authorization: `Bearer ${serviceToken}` } })
      expect(serviceUser.status).toBe(200)
      await first.close()
      await Fs.rm(file)
      const second = await startInProcessServer({ SERVICES: "sso", DATA_DIR: dataDir })
      await expect(Fs.stat(file)).rejects.toThrow()
      expect(await count(second, "sso.users")).toBe(2)
      await second.close()
    } finally {
      await Fs.rm(dataDir, { recursive: true, force: true })
    }
  })
})
