import { describe, expect, it } from "@effect/vitest"
import { PgliteClient } from "@civicstack/sql-pglite"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { grantSuperadmin } from "../../../src/migrations/grantSuperadmin"
import { migrate } from "../../../src/migrations/index"

describe("migration 6: roles", () => {
  it.scoped("makes every holder of admin on the sign-on a superadmin, and only them", () =>
    Effect.gen(function*() {
      yield* migrate
      const sql = yield* SqlClient
      // the state before roles: the sign-on's application knows admin only
      yield* sql`INSERT INTO sso.applications (id, name, description, home_uri, redirect_uris, client_id_hash,
        client_secret_hash, permissions, push_updates, push_format, require_pkce, retired, created_at)
        VALUES ('sso-id', 'sso', '', 'https://sso.example', '[]', 'c1', 's1', '["admin", "signin"]', false, 'seed', false,
          false, now()),
        ('pub-id', 'Publisher', '', 'https://pub.example', '[]', 'c2', 's2', '["admin", "signin"]', false, 'seed', false,
          false, now())`
      for (const uid of ["ada", "bob"]) {
        yield* sql`INSERT INTO sso.users (uid, name, email, password_hash, is_api_user, failed_sign_ins, created_at)
          VALUES (${uid}, ${uid}, ${`${uid}@example.com`}, NULL, false, 0, now())`
      }
      yield* sql`INSERT INTO sso.permissions (user_uid, application_id, names) VALUES
        ('ada', 'sso-id', '["admin", "signin"]'), ('bob', 'sso-id', '["signin"]'), ('bob', 'pub-id', '["admin", "signin"]')`
      yield* grantSuperadmin
      const applications = yield* sql<{ name: string; permissions: Array<string> }>`
        SELECT name, permissions FROM sso.applications ORDER BY name`
      expect(applications).toEqual([
        { name: "Publisher", permissions: ["admin", "signin"] },
        { name: "sso", permissions: ["admin", "signin", "superadmin"] }
      ])
      const held = yield* sql<{ user_uid: string; application_id: string; names: Array<string> }>`
        SELECT user_uid, application_id, names FROM sso.permissions ORDER BY user_uid, application_id`
      expect(held).toEqual([
        { user_uid: "ada", application_id: "sso-id", names: ["admin", "signin", "superadmin"] },
        { user_uid: "bob", application_id: "pub-id", names: ["admin", "signin"] },
        { user_uid: "bob", application_id: "sso-id", names: ["signin"] }
      ])
      // run again (a copy starting at the same time): nothing more changes
      yield* grantSuperadmin
      expect(yield* sql`SELECT names FROM sso.permissions WHERE user_uid = 'ada'`).toEqual([{ names: ["admin", "signin", "superadmin"] }])
    }).pipe(Effect.provide(PgliteClient.layer({}))))
})
