// Run by PgliteClient in a child process to create a new data directory (see src/createDataDirectory.ts).
import { PGlite } from "@electric-sql/pglite"

const dataDir = process.argv[2]
if (dataDir === undefined) {
  process.stderr.write("usage: create-data-directory.mjs <data directory>\n")
  process.exit(2)
}
const database = await PGlite.create({ dataDir })
await database.close()
