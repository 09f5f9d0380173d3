import { installsWithItsCivicstackNeeds } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

/**
 * A service as it installs the client: built from these sources, packed, and installed from the tarball. The data
 * directory is made by the shipped `scripts/create-data-directory.mjs` and the database runs in the shipped
 * `scripts/pglite-worker.mjs`, so the script shows the scripts ship and are found where the code looks for them.
 */
describe("installing the packed package", () => {
  installsWithItsCivicstackNeeds(fileURLToPath(new URL("..", import.meta.url)), {
    script: `
      const Fs = await import("node:fs/promises")
      const Os = await import("node:os")
      const Path = await import("node:path")
      const { Effect } = await import("effect")
      const { SqlClient } = await import("@effect/sql/SqlClient")
      const { PgliteClient } = await import("@civicstack/sql-pglite")
      const parent = await Fs.mkdtemp(Path.join(Os.tmpdir(), "sql-pglite-installed-"))
      const query = Effect.flatMap(SqlClient, (sql) => sql\`SELECT 6 * 7 AS answer, current_setting('server_version_num')::int >= 150000 AS recent\`)
      try {
        const layer = PgliteClient.layer({ dataDir: Path.join(parent, "data") })
        const [row] = await Effect.runPromise(Effect.scoped(query.pipe(Effect.provide(layer))))
        console.log(row.answer, row.recent, (await Fs.readdir(Path.join(parent, "data"))).includes("PG_VERSION"))
      } finally {
        await Fs.rm(parent, { recursive: true, force: true })
      }`,
    printed: "42 true true"
  })
})
