import { migrateSchema } from "@civicstack/kit"
import { createEmailLinks } from "./createEmailLinks"
import { createPushCredentials } from "./createPushCredentials"
import { createSigningKeys } from "./createSigningKeys"
import { createSsoTables } from "./createSsoTables"
import { createTwoStep } from "./createTwoStep"
import { dropTokenForeignKeys } from "./dropTokenForeignKeys"
import { grantSuperadmin } from "./grantSuperadmin"

/** Creates the `sso` schema and brings its tables up to date; safe to run from several copies at once. */
export const migrate = migrateSchema({
  schema: "sso",
  lockKey: 5_463_118_921,
  migrations: {
    "1_create_sso": createSsoTables,
    "2_create_push_credentials": createPushCredentials,
    "3_create_signing_keys": createSigningKeys,
    "4_drop_token_foreign_keys": dropTokenForeignKeys,
    "5_create_two_step": createTwoStep,
    "6_grant_superadmin": grantSuperadmin,
    "7_create_email_links": createEmailLinks
  }
})
