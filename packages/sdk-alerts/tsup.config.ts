import { packageBuild } from "../../tsup.package"

/**
 * The email alert contract (`@civicstack/core-alerts/api`, which imports only effect and @effect/platform) is bundled
 * in, JavaScript and types alike, so that installing the SDK does not install the service's core.
 */
export default packageBuild(["src/index.ts"], {
  packages: ["@civicstack/core-alerts"],
  sources: {
    "@civicstack/core-alerts/api": ["./../core-alerts/src/api/index.ts"],
    // The contract's declarations reach a few of its types (KeyedRecord, SubscriberList) through the module
    // specifier "src"; mapping it as well bundles them instead of leaving an import of a package named src.
    src: ["./../core-alerts/src/api/index.ts"]
  }
})
