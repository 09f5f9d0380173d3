import { migrateSchema } from "@civicstack/kit"
import { countAllowances } from "./countAllowances"
import { createAlertsTables } from "./createAlertsTables"
import { createEmailTables } from "./createEmailTables"
import { indexSingleEmails } from "./indexSingleEmails"
import { keepDeliveryReports } from "./keepDeliveryReports"
import { storeNotificationContentOnce } from "./storeNotificationContentOnce"
import { subscriptionIdsOnEmails } from "./subscriptionIdsOnEmails"
import { unlinkEmailSubscriptions } from "./unlinkEmailSubscriptions"

/** The `alerts` schema's migrations, in the order they run. */
export const alertsMigrations = {
  "1_create_alerts": createAlertsTables,
  "2_create_emails": createEmailTables,
  "3_unlink_email_subscriptions": unlinkEmailSubscriptions,
  "4_subscription_ids_on_emails": subscriptionIdsOnEmails,
  "5_index_single_emails": indexSingleEmails,
  "6_count_allowances": countAllowances,
  "7_store_notification_content_once": storeNotificationContentOnce,
  "8_keep_delivery_reports": keepDeliveryReports
}

/** The schema and lock of the alerts migrations, for `migrateSchema`. */
export const alertsSchema = { schema: "alerts", lockKey: 5_463_118_923 } as const

/** Creates the `alerts` schema and brings its tables up to date; safe to run from several copies at once. */
export const migrate = migrateSchema({ ...alertsSchema, migrations: alertsMigrations })
