import { statements } from "./statements"

/**
 * Roles: `superadmin` joins `admin` on the sign-on's own application. Before roles, `admin` could do everything, so
 * each holder of `admin` becomes a superadmin and keeps what they could do.
 */
export const grantSuperadmin = statements(
  `UPDATE sso.applications SET permissions = (
     SELECT jsonb_agg(name ORDER BY name) FROM jsonb_array_elements_text(permissions || '["superadmin"]') AS p(name))
   WHERE name = 'sso' AND NOT permissions ? 'superadmin'`,
  `UPDATE sso.permissions SET names = (
     SELECT jsonb_agg(name ORDER BY name) FROM jsonb_array_elements_text(names || '["superadmin"]') AS n(name))
   WHERE application_id = (SELECT id FROM sso.applications WHERE name = 'sso')
     AND names ? 'admin' AND NOT names ? 'superadmin'`
)
