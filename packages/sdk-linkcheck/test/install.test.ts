import { packedPackage } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

/** The SDK as a client app installs it: built from the current sources, packed, and installed from the tarball. */
describe("installing the packed SDK", () => {
  const sdk = packedPackage(fileURLToPath(new URL("..", import.meta.url)))

  it("brings effect and @effect/platform, and nothing of the service: no core, undici, jobs or @effect/sql", { timeout: 120_000 }, async () => {
    const installed = await sdk.resolvedWith(["effect@3.22", "@effect/platform@0.97"])
    expect(installed).toEqual(expect.arrayContaining(["@civicstack/sdk-linkcheck", "effect", "@effect/platform"]))
    for (const unwanted of ["@civicstack/core-linkcheck", "undici", "@civicstack/jobs", "@civicstack/kit", "@effect/sql"]) {
      expect(installed).not.toContain(unwanted)
    }
  })

  it("loads and builds a client with only effect and @effect/platform beside it", { timeout: 60_000 }, async () => {
    const printed = await sdk.runBeside(["effect", "@effect/platform"], [
      "const sdk = await import('@civicstack/sdk-linkcheck')",
      "const client = sdk.createLinkcheckClient({ baseUrl: 'http://127.0.0.1:9' })",
      "console.log(typeof client.check, sdk.SIGNATURE_HEADER, typeof sdk.LinkcheckApi)"
    ].join(";"))
    expect(printed).toBe("function X-LinkCheckerApi-Signature function")
  })
})
