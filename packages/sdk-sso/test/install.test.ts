import { installsOnItsOwn, SDK_PEERS } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/** What a client application gets: the SDK built from these sources, packed, and installed from the tarball. */
describe("the packed SDK, installed on its own", () => {
  const sdk = installsOnItsOwn(fileURLToPath(new URL("..", import.meta.url)), {
    peers: SDK_PEERS,
    unwanted: ["@civicstack/core-sso", "@civicstack/jobs", "@effect/sql", "@effect/sql-pg"],
    script: `
      const sdk = await import("@civicstack/sdk-sso")
      const options = { baseUrl: "http://127.0.0.1:9", clientId: "c", clientSecret: "s" }
      const oauth = sdk.createSsoOAuthClient(options)
      const admin = sdk.createSsoAdminClient({ baseUrl: options.baseUrl, token: "t" })
      const guard = sdk.createSsoGuard({ baseUrl: options.baseUrl, clientId: options.clientId })
      const receiver = sdk.createPushReceiver({ ...options, format: "seed", onUpdate() {}, onReauth() {} })
      const refusal = await guard.verify(undefined).catch((error) => error)
      const path = new URL(oauth.authorizationUrl({ redirectUri: "https://app.example/cb" }).url).pathname
      console.log(path, typeof admin.createUser, typeof receiver.handle, refusal._tag, refusal.status)
      await Promise.all([oauth.close(), admin.close(), guard.close(), receiver.close()])`,
    printed: "/oauth/authorize function function TokenRefused 401"
  })

  it("ships the build and the README, and depends on nothing of the SSO's server", async () => {
    const files = await sdk.files()
    expect(files).toEqual(expect.arrayContaining(["package/README.md", "package/dist/index.js", "package/dist/index.d.ts", "package/package.json"]))
    expect(files.some((file) => file.startsWith("package/src/"))).toBe(false)
    const manifest = await sdk.manifest()
    expect(manifest["dependencies"]).toBeUndefined()
    expect(Object.keys(manifest["peerDependencies"] as object).sort()).toEqual(["@effect/platform", "effect"])
  })
})
