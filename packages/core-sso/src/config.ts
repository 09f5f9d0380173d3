import { Flag } from "@civicstack/kit"
import { Config, Schema } from "effect"
import type { SsoSettings } from "./settings"
import { defaultSsoSettings } from "./settings"

/**
 * The SSO section of a host's configuration, read under `SSO_` (`SSO_ALLOW_PRIVATE_ADDRESSES`). The issuer, proxy
 * trust and production mode come from the host's own settings.
 */
export const ssoConfig: Config.Config<Pick<SsoSettings, "allowPrivateAddresses">> = Config.all({
  allowPrivateAddresses: Schema.Config("ALLOW_PRIVATE_ADDRESSES", Flag).pipe(
    Config.withDefault(defaultSsoSettings.allowPrivateAddresses)
  )
}).pipe(Config.nested("SSO"))
