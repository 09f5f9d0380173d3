import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const exec = promisify(execFile)
const packageDirectory = fileURLToPath(new URL("..", import.meta.url))
const workspaceModules = fileURLToPath(new URL("../../../node_modules", import.meta.url))

/** What a client application gets: the SDK built from these sources, packed, and installed from the tarball. */
describe("the packed SDK, installed on its own", () => {
  let project: string
  let tarball: string
  beforeAll(async () => {
    project = await Fs.mkdtemp(Path.join(Os.tmpdir(), "sdk-sso-install-"))
    await exec("npm", ["run", "build"], { cwd: packageDirectory })
    const packed = await exec("npm", ["pack", "--json", "--pack-destination", project], { cwd: packageDirectory })
    tarball = Path.join(project, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
    await Fs.writeFile(Path.join(project, "package.json"), JSON.stringify({ name: "client-app", private: true }))
  }, 120_000)
  afterAll(() => Fs.rm(project, { recursive: true, force: true }))

  it("ships the build and the README, and depends on nothing of the SSO's server", async () => {
    const listing = await exec("tar", ["-tzf", tarball])
    const files = listing.stdout.trim().split("\n").sort()
    expect(files).toEqual(expect.arrayContaining(["package/README.md", "package/dist/index.js", "package/dist/index.d.ts", "package/package.json"]))
    expect(files.some((file) => file.startsWith("package/src/"))).toBe(false)
    const manifest = JSON.parse((await exec("tar", ["-xzOf", tarball, "package/package.json"])).stdout) as Record<string, unknown>
    expect(manifest["dependencies"]).toBeUndefined()
    expect(Object.keys(manifest["peerDependencies"] as object).sort()).toEqual(["@effect/platform", "effect"])
  })

  it("loads with only effect and @effect/platform beside it and makes every piece", { timeout: 60_000 }, async () => {
    const modules = Path.join(project, "node_modules")
    const sdk = Path.join(modules, "@civicstack", "sdk-sso")
    await Fs.mkdir(sdk, { recursive: true })
    await exec("tar", ["-xzf", tarball, "-C", sdk, "--strip-components=1"])
    await Fs.mkdir(Path.join(modules, "@effect"), { recursive: true })
    await Fs.symlink(Path.join(workspaceModules, "effect"), Path.join(modules, "effect"))
    await Fs.symlink(Path.join(workspaceModules, "@effect", "platform"), Path.join(modules, "@effect", "platform"))
    const script = [
      "const sdk = await import('@civicstack/sdk-sso')",
      "const options = { baseUrl: 'http://127.0.0.1:9', clientId: 'c', clientSecret: 's' }",
      "const oauth = sdk.createSsoOAuthClient(options)",
      "const admin = sdk.createSsoAdminClient({ baseUrl: options.baseUrl, token: 't' })",
      "const guard = sdk.createSsoGuard({ baseUrl: options.baseUrl })",
      "const receiver = sdk.createPushReceiver({ ...options, format: 'seed', onUpdate() {}, onReauth() {} })",
      "const refusal = await guard.verify(undefined).catch((error) => error)",
      "console.log(new URL(oauth.authorizationUrl({ redirectUri: 'https://app.example/cb' }).url).pathname, typeof admin.createUser, typeof receiver.handle, refusal._tag, refusal.status)",
      "await Promise.all([oauth.close(), admin.close(), guard.close(), receiver.close()])"
    ].join(";")
    const loaded = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: project })
    expect(loaded.stdout.trim()).toBe("/oauth/authorize function function TokenRefused 401")
  })
})
