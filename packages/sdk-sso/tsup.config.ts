import { defineConfig } from "tsup"

/**
 * The sign-on contract (`@civicstack/core-sso/api`, which imports only effect and @effect/platform) is bundled in,
 * code and declarations, so that a client app installing the SDK does not install the SSO's server code.
 */
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  dts: {
    resolve: true,
    compilerOptions: { paths: { "@civicstack/core-sso/api": ["./../core-sso/src/api/index.ts"] } }
  },
  noExternal: ["@civicstack/core-sso"],
  // built from the contract's sources, so the core need not be built first
  esbuildOptions: (options) => {
    options.conditions = ["@civicstack/source"]
  },
  clean: true,
  target: "node20"
})
