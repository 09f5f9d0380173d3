import { expecting, Flag, WholeNumber } from "@civicstack/kit"
import { Config, Duration, Option, ParseResult, Schema } from "effect"
import type { SsoSettings } from "./settings"
import { defaultSsoSettings } from "./settings"

const HttpUrl = Schema.String.pipe(
  Schema.filter((value) => URL.canParse(value) && ["http:", "https:"].includes(new URL(value).protocol)),
  Schema.annotations(expecting("an absolute http(s) URL"))
)

/** `SSO_ENCRYPTION_KEY`: base64 keys of 32 bytes, comma-separated; the first seals, the others only open. */
const EncryptionKeys = Schema.transformOrFail(Schema.String, Schema.Array(Schema.Uint8ArrayFromSelf), {
  strict: true,
  decode: (text, _, ast) => {
    const keys = text.split(",").map((part) => part.trim()).filter((part) => part !== "")
      .map((part) => Buffer.from(part, "base64"))
    return keys.length > 0 && keys.every((key) => key.length === 32)
      ? ParseResult.succeed(keys.map((key) => new Uint8Array(key)))
      : ParseResult.fail(new ParseResult.Type(ast, text))
  },
  encode: (keys) => ParseResult.succeed(keys.map((key) => Buffer.from(key).toString("base64")).join(","))
}).annotations(expecting("one or more comma-separated base64 keys of 32 bytes (openssl rand -base64 32)"))

/**
 * The SSO section of a host's configuration, read under `SSO_` (`SSO_ISSUER`, `SSO_ENCRYPTION_KEY`, `SSO_SESSION_MAX_HOURS`,
 * `SSO_REFRESH_TOKEN_DAYS`, `SSO_ALLOW_PRIVATE_ADDRESSES`). Proxy
 * trust and production mode come from the host's own settings; the issuer's default depends on the host's port.
 */
export const ssoConfig: Config.Config<
  & Pick<SsoSettings, "allowPrivateAddresses" | "sessionMaxAge" | "refreshTokenLifetime">
  & { readonly issuer: Option.Option<string>; readonly encryptionKeys: Option.Option<ReadonlyArray<Uint8Array>> }
> = Config.all({
  // not Config.option, which would also turn a wrong value into none
  issuer: Schema.Config("ISSUER", HttpUrl).pipe(
    Config.map((url) => Option.some(url.replace(/\/+$/, ""))),
    Config.withDefault(Option.none<string>())
  ),
  encryptionKeys: Schema.Config("ENCRYPTION_KEY", EncryptionKeys).pipe(
    Config.map(Option.some),
    Config.withDefault(Option.none<ReadonlyArray<Uint8Array>>())
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
