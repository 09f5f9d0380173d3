import { expecting, Flag } from "@civicstack/kit"
import { Config, Option, Schema } from "effect"
import type { SsoSettings } from "./settings"
import { defaultSsoSettings } from "./settings"

const HttpUrl = Schema.String.pipe(
  Schema.filter((value) => URL.canParse(value) && ["http:", "https:"].includes(new URL(value).protocol)),
  Schema.annotations(expecting("an absolute http(s) URL"))
)

/**
 * The SSO section of a host's configuration, read under `SSO_` (`SSO_ISSUER`, `SSO_ALLOW_PRIVATE_ADDRESSES`). Proxy
 * trust and production mode come from the host's own settings; the issuer's default depends on the host's port.
 */
export const ssoConfig: Config.Config<
  Pick<SsoSettings, "allowPrivateAddresses"> & { readonly issuer: Option.Option<string> }
> = Config.all({
  issuer: Config.option(Schema.Config("ISSUER", HttpUrl)).pipe(
    Config.map(Option.map((url) => url.replace(/\/+$/, "")))
  ),
  allowPrivateAddresses: Schema.Config("ALLOW_PRIVATE_ADDRESSES", Flag).pipe(
    Config.withDefault(defaultSsoSettings.allowPrivateAddresses)
  )
}).pipe(Config.nested("SSO"))
