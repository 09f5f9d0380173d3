import { packageBuild } from "../../tsup.package"

/**
 * The sign-on contract (`@civicstack/core-sso/api`, which imports only effect and @effect/platform) is bundled in,
 * code and declarations, so that a client app installing the SDK does not install the SSO's server code.
 */
export default packageBuild(["src/index.ts"], {
  packages: ["@civicstack/core-sso"],
  sources: { "@civicstack/core-sso/api": ["./../core-sso/src/api/index.ts"] }
})
