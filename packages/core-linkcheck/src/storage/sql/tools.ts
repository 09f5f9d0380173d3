import { sqlStoreTools } from "@civicstack/kit"
import { Effect } from "effect"
import { BATCH_COLUMNS, CHECK_COLUMNS, CHECK_COLUMNS_BUT_ANCHORS, sha256Of } from "./rows"

/** The kit's SQL store tools, with what the linkcheck statements add to them. */
export const linkcheckSqlTools = Effect.map(sqlStoreTools("linkcheck store"), (tools) => {
  const { sql } = tools
  return {
    ...tools,
    checkColumns: sql.literal(CHECK_COLUMNS),
    checkColumnsButAnchors: sql.literal(CHECK_COLUMNS_BUT_ANCHORS),
    batchColumns: sql.literal(BATCH_COLUMNS),
    sha256: (column: string) => sql.literal(sha256Of(column)),
    sha256Param: (text: string) => sql`sha256(convert_to(${text}::text, 'UTF8'))`
  }
})

export type LinkcheckSqlTools = Effect.Effect.Success<typeof linkcheckSqlTools>
