import { packageBuild } from "../../tsup.package"

/**
 * The link checking contract (`@civicstack/core-linkcheck/api`, which imports only effect and @effect/platform) is
 * bundled in, JavaScript and types alike, so that installing the SDK does not install the service's core.
 */
export default packageBuild(["src/index.ts"], {
  packages: ["@civicstack/core-linkcheck"],
  sources: { "@civicstack/core-linkcheck/api": ["./../core-linkcheck/src/api/index.ts"] }
})
