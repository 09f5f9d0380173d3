import { defineConfig } from "tsup"

/**
 * The email alert contract (`@civicstack/core-alerts/api`, which imports only effect and @effect/platform) is bundled
 * in, JavaScript and types alike, so that installing the SDK does not install the service's core.
 */
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  dts: {
    resolve: true,
    compilerOptions: {
      // The contract's declarations reach a few of its types (KeyedRecord, SubscriberList) through the module
      // specifier "src"; mapping it as well bundles them instead of leaving an import of a package named src.
      paths: {
        "@civicstack/core-alerts/api": ["./../core-alerts/src/api/index.ts"],
        src: ["./../core-alerts/src/api/index.ts"]
      }
    }
  },
  noExternal: ["@civicstack/core-alerts"],
  // the contract's sources, as in the monorepo's tests, so the SDK builds without building the core first
  esbuildOptions: (options) => {
    options.conditions = ["@civicstack/source"]
  },
  clean: true,
  target: "node20"
})
