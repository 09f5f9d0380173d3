import type { JobQueue } from "@civicstack/jobs"
import type { CoreParts } from "@civicstack/kit"
import type { Effect } from "effect"
import { Context } from "effect"
import type { SsoSettings } from "../settings"
import type { SsoStore, StoreError } from "../storage/SsoStore"
import type { IdTokens } from "./idTokens"
import type { Passwords } from "./Passwords"
import type { PushTransport } from "./PushTransport"

/**
 * The internal parts of one SSO, built once by `layerSql` or `layerMemory` and shared by its services and workers.
 * Not exported: embedders assemble the service from those layers.
 */
export class SsoParts extends Context.Tag("@civicstack/core-sso/SsoParts")<SsoParts, CoreParts<SsoSettings, SsoStore, JobQueue> & {
  readonly passwords: Context.Tag.Service<Passwords>
  readonly pushTransport: Context.Tag.Service<PushTransport>
  readonly idTokens: IdTokens
  /** Seals again what is stored in the clear or under an older encryption key; how many secrets it sealed. */
  readonly resealSecrets: Effect.Effect<number, StoreError>
}>() {}
