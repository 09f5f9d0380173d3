import { installsWithItsCivicstackNeeds } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

/** A service as it installs the package: built from these sources, packed, and installed from the tarball. */
describe("installing the packed package", () => {
  installsWithItsCivicstackNeeds(fileURLToPath(new URL("..", import.meta.url)), {
    // a host name the test's resolver puts on a private address: undici's agent asks the guarded lookup, which refuses
    script: `
      const { Effect } = await import("effect")
      const outbound = await import("@civicstack/outbound")
      const settings = {
        allowPrivateAddresses: false,
        resolve: async () => [{ address: "10.0.0.7", family: 4 }],
        connectTimeout: "2 seconds",
        responseTimeout: "2 seconds",
        totalTimeout: "2 seconds",
        userAgent: "install-test"
      }
      const refusal = await Effect.runPromise(Effect.scoped(Effect.flatMap(outbound.makeOutboundClient(settings), (client) =>
        Effect.flip(client.request("http://intranet.example/", { method: "GET" })))))
      console.log(outbound.isPublicAddress("93.184.216.34"), outbound.isPublicAddress("192.168.1.1"), refusal.reason)`,
    printed: "true false privateAddress"
  })
})
