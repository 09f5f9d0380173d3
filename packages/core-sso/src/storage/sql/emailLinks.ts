import { Effect, Option, Schema } from "effect"
import type { EmailLink } from "../../domain/records"
import type { SsoStore } from "../SsoStore"
import { OptionalTimestamp, storable, Timestamp, timestamp } from "./columns"
import type { SsoSqlTools } from "./tools"

const EmailLinkRow = Schema.Struct({
  id: Schema.String,
  user_uid: Schema.String,
  purpose: Schema.Literal("invitation", "password_reset"),
  token_hash: Schema.String,
  created_at: Timestamp,
  expires_at: Timestamp,
  used_at: OptionalTimestamp
})

const toEmailLink = (row: typeof EmailLinkRow.Type): EmailLink => ({
  id: row.id,
  userUid: row.user_uid,
  purpose: row.purpose,
  tokenHash: row.token_hash,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  usedAt: row.used_at
})

const IdRow = Schema.Struct({ id: Schema.String })

/** Links that expired are kept this long, so that one followed late still explains itself. */
const EXPIRED_LINKS_KEPT = "30 days"

type EmailLinkMethods = Pick<SsoStore["Type"], "insertEmailLink" | "emailLinkByHash" | "useEmailLink" | "endEmailLinksOf">

/** The one-time links sent by email, by the hash of their token. */
export const emailLinkMethods = ({ firstRow, sql, storeError, transaction }: SsoSqlTools): EmailLinkMethods => ({
  insertEmailLink: (link) =>
    transaction(Effect.mapError(
      Effect.zipRight(
        sql`DELETE FROM sso.email_links
          WHERE expires_at < ${timestamp(link.createdAt)}::timestamptz - ${EXPIRED_LINKS_KEPT}::interval`,
        sql`INSERT INTO sso.email_links (id, user_uid, purpose, token_hash, created_at, expires_at)
          VALUES (${link.id}, ${link.userUid}, ${link.purpose}, ${link.tokenHash},
            ${timestamp(link.createdAt)}::timestamptz, ${timestamp(link.expiresAt)}::timestamptz)`
      ),
      storeError("insertEmailLink")
    )),
  emailLinkByHash: (tokenHash) =>
    storable(tokenHash)
      ? Effect.map(
        firstRow("emailLinkByHash", EmailLinkRow, sql`SELECT * FROM sso.email_links WHERE token_hash = ${tokenHash}`),
        Option.map(toEmailLink)
      )
      : Effect.succeed(Option.none()),
  useEmailLink: (id, at) =>
    Effect.map(
      firstRow("useEmailLink", IdRow, sql`
        UPDATE sso.email_links SET used_at = ${timestamp(at)}::timestamptz
        WHERE id = ${id} AND used_at IS NULL
        RETURNING id`),
      Option.isSome
    ),
  endEmailLinksOf: (uid, at) =>
    Effect.asVoid(Effect.mapError(
      sql`UPDATE sso.email_links SET used_at = ${timestamp(at)}::timestamptz WHERE user_uid = ${uid} AND used_at IS NULL`,
      storeError("endEmailLinksOf")
    ))
})
