import { Config, Schema } from "effect"
import type { SsoSettings } from "./settings"
import { defaultSsoSettings } from "./settings"

/** A message for the whole value, whatever part of the decoding failed. */
const expecting = (expected: string) => ({ message: () => ({ message: expected, override: true }) })

const Flag = Schema.transform(Schema.Literal("true", "false", "1", "0"), Schema.Boolean, {
  strict: true,
  decode: (value) => value === "true" || value === "1",
  encode: (value) => (value ? "true" : "false")
}).annotations(expecting("true or false"))

/**
 * The SSO section of a host's configuration, read under `SSO_` (`SSO_ALLOW_PRIVATE_ADDRESSES`). The issuer, proxy
 * trust and production mode come from the host's own settings.
 */
export const ssoConfig: Config.Config<Pick<SsoSettings, "allowPrivateAddresses">> = Config.all({
  allowPrivateAddresses: Schema.Config("ALLOW_PRIVATE_ADDRESSES", Flag).pipe(
    Config.withDefault(defaultSsoSettings.allowPrivateAddresses)
  )
}).pipe(Config.nested("SSO"))
