import { defineConfig } from "tsup"

/** The build of a published package: ESM and .d.ts for each entry. */
export const packageBuild = (entry: Array<string> = ["src/index.ts"]) =>
  defineConfig({ entry, format: ["esm"], dts: true, clean: true, target: "node20" })
