import { installsOnItsOwn, SDK_PEERS } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

/** The SDK as a client app installs it: built from the current sources, packed, and installed from the tarball. */
describe("installing the packed SDK", () => {
  installsOnItsOwn(fileURLToPath(new URL("..", import.meta.url)), {
    peers: SDK_PEERS,
    unwanted: ["@civicstack/core-linkcheck", "undici", "@civicstack/jobs", "@effect/sql"],
    script: `
      const sdk = await import("@civicstack/sdk-linkcheck")
      const client = sdk.createLinkcheckClient({ baseUrl: "http://127.0.0.1:9" })
      console.log(typeof client.check, sdk.SIGNATURE_HEADER, typeof sdk.LinkcheckApi)`,
    printed: "function X-LinkCheckerApi-Signature function"
  })
})
