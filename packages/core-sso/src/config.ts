import { expecting, Flag, WholeNumber } from "@civicstack/kit"
import { Config, Duration, Option, Schema } from "effect"
import type { SsoSettings } from "./settings"
import { defaultSsoSettings } from "./settings"

const HttpUrl = Schema.String.pipe(
  Schema.filter((value) => URL.canParse(value) && ["http:", "https:"].includes(new URL(value).protocol)),
  Schema.annotations(expecting("an absolute http(s) URL"))
)

/**
 * The SSO section of a host's configuration, read under `SSO_` (`SSO_ISSUER`, `SSO_SESSION_MAX_HOURS`,
 * `SSO_REFRESH_TOKEN_DAYS`, `SSO_ALLOW_PRIVATE_ADDRESSES`). Proxy
 * trust and production mode come from the host's own settings; the issuer's default depends on the host's port.
 */
export const ssoConfig: Config.Config<
  & Pick<SsoSettings, "allowPrivateAddresses" | "sessionMaxAge" | "refreshTokenLifetime">
  & { readonly issuer: Option.Option<string> }
> = Config.all({
  issuer: Config.option(Schema.Config("ISSUER", HttpUrl)).pipe(
    Config.map(Option.map((url) => url.replace(/\/+$/, "")))
  ),
  allowPrivateAddresses: Schema.Config("ALLOW_PRIVATE_ADDRESSES", Flag).pipe(
    Config.withDefault(defaultSsoSettings.allowPrivateAddresses)
  ),
  sessionMaxAge: Schema.Config("SESSION_MAX_HOURS", WholeNumber(1, 24 * 31, "hours")).pipe(
    Config.map(Duration.hours),
    Config.withDefault(defaultSsoSettings.sessionMaxAge)
  ),
  refreshTokenLifetime: Schema.Config("REFRESH_TOKEN_DAYS", WholeNumber(1, 3650, "days")).pipe(
    Config.map(Duration.days),
    Config.withDefault(defaultSsoSettings.refreshTokenLifetime)
  )
}).pipe(Config.nested("SSO"))
