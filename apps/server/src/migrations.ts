import * as Linkcheck from "@civicstack/core-linkcheck"
import * as Jobs from "@civicstack/jobs"
import { Effect } from "effect"

/** Every package's migrations, in dependency order. Each package keeps its own schema and migration table. */
const packageMigrations = [
  { name: "jobs", migrate: Jobs.migrate },
  { name: "linkcheck", migrate: Linkcheck.migrate }
] as const

export const migrateAll = Effect.forEach(
  packageMigrations,
  ({ migrate, name }) => migrate.pipe(Effect.tap(() => Effect.logDebug("Migrated").pipe(Effect.annotateLogs({ package: name })))),
  { discard: true }
).pipe(Effect.withLogSpan("migrations"))
