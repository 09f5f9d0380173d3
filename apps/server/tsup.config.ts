import * as Fs from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { defineConfig } from "tsup"

const pgliteScripts = fileURLToPath(new URL("../../packages/sql-pglite/scripts", import.meta.url))
const scriptsBesideDist = fileURLToPath(new URL("./scripts", import.meta.url))

/**
 * One file of JavaScript with every workspace package built in from its sources, so that the packed server installs
 * from the registry alone; the other packages stay imports, installed as the server's dependencies. sql-pglite finds
 * its worker scripts beside the folder of the code that runs, so they are copied beside `dist`.
 */
export default defineConfig({
  entry: ["src/cli.ts"],
  format: ["esm"],
  noExternal: [/^@civicstack\//],
  esbuildOptions: (options) => {
    options.conditions = ["@civicstack/source"]
  },
  onSuccess: async () => {
    await Fs.cp(pgliteScripts, scriptsBesideDist, { recursive: true })
  },
  clean: true,
  target: "node20"
})
