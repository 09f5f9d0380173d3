import { importedModules, packedPackage } from "@civicstack/kit/testing"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const sdkDirectory = fileURLToPath(new URL("..", import.meta.url))
const isPeerModule = (specifier: string) => /^(effect|@effect\/platform)(\/|$)/.test(specifier)

/** The SDK as a client app installs it: built from the current sources, packed, and installed from the tarball. */
describe("installing the packed SDK", () => {
  const sdk = packedPackage(sdkDirectory)

  it("ships JavaScript and declarations that import nothing but effect and @effect/platform", async () => {
    for (const file of ["index.js", "index.d.ts"]) {
      const modules = importedModules(await Fs.readFile(Path.join(sdkDirectory, "dist", file), "utf8"))
      expect(modules.length).toBeGreaterThan(0)
      expect(modules.filter((specifier) => !isPeerModule(specifier))).toEqual([])
    }
  })

  it("brings effect and @effect/platform, and nothing of the service: no core, jobs or @effect/sql", { timeout: 120_000 }, async () => {
    const installed = await sdk.resolvedWith(["effect@3.22", "@effect/platform@0.97"])
    expect(installed).toEqual(expect.arrayContaining(["@civicstack/sdk-alerts", "effect", "@effect/platform"]))
    for (const unwanted of ["@civicstack/core-alerts", "@civicstack/jobs", "@civicstack/kit", "@effect/sql", "@effect/sql-pg"]) {
      expect(installed).not.toContain(unwanted)
    }
  })

  it("loads and builds a client with only effect and @effect/platform beside it", { timeout: 60_000 }, async () => {
    const printed = await sdk.runBeside(["effect", "@effect/platform"], [
      "const sdk = await import('@civicstack/sdk-alerts')",
      "const client = sdk.createAlertsClient({ baseUrl: 'http://127.0.0.1:9' })",
      "const refusal = await client.getList('').catch((error) => error)",
      "await client.close()",
      "console.log(typeof client.findOrCreateList, typeof sdk.AlertsApi, refusal.name, refusal.status)"
    ].join(";"))
    expect(printed).toBe("function function UnprocessableEntityError 422")
  })
})
