import { migrateSchema } from "@civicstack/jobs"
import { createAlertsTables } from "./createAlertsTables"

/** Creates the `alerts` schema and brings its tables up to date; safe to run from several copies at once. */
export const migrate = migrateSchema({
  schema: "alerts",
  lockKey: 5_463_118_923,
  migrations: {
    "1_create_alerts": createAlertsTables
  }
})
