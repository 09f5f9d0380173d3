import { statements } from "./statements"

/**
 * What providers report about emails after taking them (Notify's status callbacks, SMTP bounces), kept with each
 * email and deleted with it; the same report (source, provider id, status) is kept once.
 */
export const keepDeliveryReports = statements(
  `CREATE TABLE alerts.delivery_reports (
    id bigserial PRIMARY KEY,
    email_id uuid NOT NULL REFERENCES alerts.emails (id) ON DELETE CASCADE,
    source text NOT NULL CHECK (source IN ('notify', 'bounce')),
    provider_id text NOT NULL,
    status text NOT NULL
      CHECK (status IN ('delivered', 'permanent-failure', 'temporary-failure', 'technical-failure')),
    detail text,
    reported_at timestamptz,
    received_at timestamptz NOT NULL,
    CONSTRAINT delivery_reports_once UNIQUE (email_id, source, provider_id, status)
  )`
)
