/**
 * An oidc-provider adapter on PostgreSQL, for the SSO bench only: oidc-provider doing its userinfo and refresh grant
 * with its tokens in a database, as ours does, beside the memory adapter the issue names. One table, as the adapters
 * the oidc-provider project lists keep them: each entry's payload as JSON, with its grant, user code and session uid
 * beside it for the lookups the adapter interface has.
 */
import type { Adapter, AdapterPayload } from "oidc-provider"
import pg from "pg"

export const createAdapterTable = `
  CREATE TABLE IF NOT EXISTS oidc_entries (
    model text NOT NULL,
    id text NOT NULL,
    payload jsonb NOT NULL,
    grant_id text,
    user_code text,
    uid text,
    expires_at timestamptz,
    consumed_at timestamptz,
    PRIMARY KEY (model, id)
  );
  CREATE INDEX IF NOT EXISTS oidc_entries_by_grant ON oidc_entries (grant_id);
  CREATE INDEX IF NOT EXISTS oidc_entries_by_user_code ON oidc_entries (model, user_code);
  CREATE INDEX IF NOT EXISTS oidc_entries_by_uid ON oidc_entries (model, uid)`

interface EntryRow {
  readonly payload: AdapterPayload
  readonly consumed_at: Date | null
}

const payloadOf = (row: EntryRow | undefined): AdapterPayload | undefined =>
  row === undefined
    ? undefined
    : { ...row.payload, ...(row.consumed_at === null ? {} : { consumed: Math.floor(row.consumed_at.getTime() / 1000) }) }

/** The adapter class oidc-provider's `adapter` option takes, over one pool (10 connections, the `pg` default). */
export const postgresAdapter = (pool: pg.Pool) =>
  class PostgresAdapter implements Adapter {
    constructor(readonly model: string) {}

    private async findWhere(column: "id" | "user_code" | "uid", value: string) {
      const { rows } = await pool.query<EntryRow>(
        `SELECT payload, consumed_at FROM oidc_entries
         WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now())`,
        [this.model, value]
      )
      return payloadOf(rows[0])
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      await pool.query(
        `INSERT INTO oidc_entries (model, id, payload, grant_id, user_code, uid, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $7::integer) END)
         ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
           user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`,
        [this.model, id, payload, payload.grantId ?? null, payload.userCode ?? null, payload.uid ?? null, expiresIn ?? null]
      )
    }

    find(id: string) {
      return this.findWhere("id", id)
    }

    findByUserCode(userCode: string) {
      return this.findWhere("user_code", userCode)
    }

    findByUid(uid: string) {
      return this.findWhere("uid", uid)
    }

    async consume(id: string) {
      await pool.query("UPDATE oidc_entries SET consumed_at = now() WHERE model = $1 AND id = $2", [this.model, id])
    }

    async destroy(id: string) {
      await pool.query("DELETE FROM oidc_entries WHERE model = $1 AND id = $2", [this.model, id])
    }

    async revokeByGrantId(grantId: string) {
      await pool.query("DELETE FROM oidc_entries WHERE grant_id = $1", [grantId])
    }
  }
