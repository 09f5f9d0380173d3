import { packedPackage } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/** What a client application gets: the SDK built from these sources, packed, and installed from the tarball. */
describe("the packed SDK, installed on its own", () => {
  const sdk = packedPackage(fileURLToPath(new URL("..", import.meta.url)))

  it("ships the build and the README, and depends on nothing of the SSO's server", async () => {
    const files = await sdk.files()
    expect(files).toEqual(expect.arrayContaining(["package/README.md", "package/dist/index.js", "package/dist/index.d.ts", "package/package.json"]))
    expect(files.some((file) => file.startsWith("package/src/"))).toBe(false)
    const manifest = await sdk.manifest()
    expect(manifest["dependencies"]).toBeUndefined()
    expect(Object.keys(manifest["peerDependencies"] as object).sort()).toEqual(["@effect/platform", "effect"])
  })

  it("loads with only effect and @effect/platform beside it and makes every piece", { timeout: 60_000 }, async () => {
    const printed = await sdk.runBeside(["effect", "@effect/platform"], [
      "const sdk = await import('@civicstack/sdk-sso')",
      "const options = { baseUrl: 'http://127.0.0.1:9', clientId: 'c', clientSecret: 's' }",
      "const oauth = sdk.createSsoOAuthClient(options)",
      "const admin = sdk.createSsoAdminClient({ baseUrl: options.baseUrl, token: 't' })",
      "const guard = sdk.createSsoGuard({ baseUrl: options.baseUrl })",
      "const receiver = sdk.createPushReceiver({ ...options, format: 'seed', onUpdate() {}, onReauth() {} })",
      "const refusal = await guard.verify(undefined).catch((error) => error)",
      "console.log(new URL(oauth.authorizationUrl({ redirectUri: 'https://app.example/cb' }).url).pathname, typeof admin.createUser, typeof receiver.handle, refusal._tag, refusal.status)",
      "await Promise.all([oauth.close(), admin.close(), guard.close(), receiver.close()])"
    ].join(";"))
    expect(printed).toBe("/oauth/authorize function function TokenRefused 401")
  })
})
