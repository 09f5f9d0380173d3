import { fileURLToPath } from "node:url"
import { defineConfig } from "tsup"

const sourceOf = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** The private kit's entries: bundled, code and declarations, into every package that uses it. */
const kitSources = {
  "@civicstack/kit": [sourceOf("./packages/kit/src/index.ts")],
  "@civicstack/kit/access": [sourceOf("./packages/kit/src/access.ts")],
  "@civicstack/kit/access/public": [sourceOf("./packages/kit/src/accessPublic.ts")],
  "@civicstack/kit/sdk": [sourceOf("./packages/kit/src/sdk/index.ts")]
}

export interface Bundled {
  /** Workspace packages bundled in besides the kit (an SDK's contract), by name. */
  readonly packages?: ReadonlyArray<string>
  /** Where their declarations are, by the specifiers the sources use. */
  readonly sources?: Record<string, ReadonlyArray<string>>
}

/**
 * The build of a published package: ESM and .d.ts for each entry. The private kit and `bundled` are built in from
 * their sources, so that installing the package installs neither and nothing needs building first.
 */
export const packageBuild = (entry: Array<string> = ["src/index.ts"], bundled: Bundled = {}) =>
  defineConfig({
    entry,
    format: ["esm"],
    dts: {
      resolve: [/^@civicstack\/kit/, ...(bundled.packages ?? [])],
      compilerOptions: { paths: { ...kitSources, ...bundled.sources } }
    },
    noExternal: [/^@civicstack\/kit/, ...(bundled.packages ?? [])],
    esbuildOptions: (options) => {
      options.conditions = ["@civicstack/source"]
    },
    clean: true,
    target: "node20"
  })
