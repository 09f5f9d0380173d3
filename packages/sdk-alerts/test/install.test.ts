import { importedModules, installsOnItsOwn, SDK_PEERS } from "@civicstack/kit/testing"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const sdkDirectory = fileURLToPath(new URL("..", import.meta.url))
const isPeerModule = (specifier: string) => /^(effect|@effect\/platform)(\/|$)/.test(specifier)

/** The SDK as a client app installs it: built from the current sources, packed, and installed from the tarball. */
describe("installing the packed SDK", () => {
  installsOnItsOwn(sdkDirectory, {
    peers: SDK_PEERS,
    unwanted: ["@civicstack/core-alerts", "@civicstack/jobs", "@effect/sql", "@effect/sql-pg"],
    script: `
      const sdk = await import("@civicstack/sdk-alerts")
      const client = sdk.createAlertsClient({ baseUrl: "http://127.0.0.1:9" })
      const refusal = await client.getList("").catch((error) => error)
      await client.close()
      console.log(typeof client.findOrCreateList, typeof sdk.AlertsApi, refusal.name, refusal.status)`,
    printed: "function function UnprocessableEntityError 422"
  })

  it("ships JavaScript and declarations that import nothing but effect and @effect/platform", async () => {
    for (const file of ["index.js", "index.d.ts"]) {
      const modules = importedModules(await Fs.readFile(Path.join(sdkDirectory, "dist", file), "utf8"))
      expect(modules.length).toBeGreaterThan(0)
      expect(modules.filter((specifier) => !isPeerModule(specifier))).toEqual([])
    }
  })
})
