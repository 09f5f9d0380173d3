import { expecting, Flag, WholeNumber } from "@civicstack/kit"
import { Config, Duration, Schema } from "effect"
import type { LinkcheckSettings } from "./settings"
import { defaultLinkcheckSettings } from "./settings"

const Count = WholeNumber(1, 10_000)
const Days = WholeNumber(1, 3650, "days")
const Millis = WholeNumber(0, 60_000, "milliseconds")

const DomainList = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^[a-z0-9.,\s-]*$/i)),
  Schema.Array(Schema.String),
  {
    strict: true,
    decode: (value) =>
      value.split(",").map((domain) => domain.trim().toLowerCase().replace(/^\./, "")).filter((domain) => domain !== ""),
    encode: (domains) => domains.join(",")
  }
).annotations(expecting("a comma-separated list of domain names"))

/**
 * The link checking section of a host's configuration, read under `LINKCHECK_` (`LINKCHECK_CONCURRENCY`,
 * `LINKCHECK_CHECK_TIMEOUT_SECONDS`, `LINKCHECK_FRAGMENTS`, ...).
 * Each value names what it expects when it is wrong; unset values take the defaults.
 */
export const linkcheckConfig: Config.Config<
  Pick<
    LinkcheckSettings,
    | "allowPrivateAddresses"
    | "suspiciousDomains"
    | "internalDomains"
    | "concurrency"
    | "perHostConcurrency"
    | "checkFragments"
    | "retention"
    | "scheduler"
    | "inspector"
  >
> = Config.all({
  allowPrivateAddresses: Schema.Config("ALLOW_PRIVATE_ADDRESSES", Flag).pipe(
    Config.withDefault(defaultLinkcheckSettings.allowPrivateAddresses)
  ),
  suspiciousDomains: Schema.Config("SUSPICIOUS_DOMAINS", DomainList).pipe(
    Config.withDefault(defaultLinkcheckSettings.suspiciousDomains)
  ),
  internalDomains: Schema.Config("INTERNAL_DOMAINS", DomainList).pipe(
    Config.withDefault(defaultLinkcheckSettings.internalDomains)
  ),
  concurrency: Schema.Config("CONCURRENCY", Count).pipe(Config.withDefault(defaultLinkcheckSettings.concurrency)),
  perHostConcurrency: Schema.Config("PER_HOST_CONCURRENCY", Count).pipe(
    Config.withDefault(defaultLinkcheckSettings.perHostConcurrency)
  ),
  checkFragments: Schema.Config("FRAGMENTS", Flag).pipe(Config.withDefault(defaultLinkcheckSettings.checkFragments)),
  scheduler: Schema.Config("PER_HOST_INTERVAL_MS", Millis).pipe(
    Config.map((millis) => ({ perHostInterval: Duration.millis(millis) })),
    Config.withDefault({})
  ),
  inspector: Schema.Config("CHECK_TIMEOUT_SECONDS", WholeNumber(1, 600, "seconds")).pipe(
    Config.map((seconds) => ({ checkTimeout: Duration.seconds(seconds) })),
    Config.withDefault({})
  ),
  retention: Schema.Config("RETENTION_DAYS", Days).pipe(
    Config.map(Duration.days),
    Config.withDefault(defaultLinkcheckSettings.retention)
  )
}).pipe(Config.nested("LINKCHECK"))
