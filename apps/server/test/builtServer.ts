import { build } from "esbuild"
import * as Fs from "node:fs/promises"
import { fileURLToPath } from "node:url"

/**
 * The server's processes in these tests run one JavaScript file built from the sources before the tests start, with
 * the workspace packages built in and everything else loaded from node_modules. Starting it costs half the CPU of
 * compiling the sources through tsx in every process, and the tests start well over a hundred processes.
 */
const buildDirectory = fileURLToPath(new URL("../node_modules/.cache/civicstack-test-server/", import.meta.url))

/** sql-pglite finds its worker scripts beside its own folder, so they are copied beside the bundle's folder. */
const pgliteScripts = fileURLToPath(new URL("../../../packages/sql-pglite/scripts", import.meta.url))

export const builtCli = `${buildDirectory}dist/cli.js`

export const buildServer = async () => {
  await Fs.rm(buildDirectory, { recursive: true, force: true })
  await build({
    entryPoints: [fileURLToPath(new URL("../src/cli.ts", import.meta.url))],
    outfile: builtCli,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@civicstack/source"],
    logLevel: "warning",
    plugins: [{
      name: "workspace-packages-only",
      setup: (bundler) => {
        bundler.onResolve({ filter: /^[^./]/ }, ({ path }) => path.startsWith("@civicstack/") ? undefined : { external: true })
      }
    }]
  })
  await Fs.cp(pgliteScripts, `${buildDirectory}scripts`, { recursive: true })
}
