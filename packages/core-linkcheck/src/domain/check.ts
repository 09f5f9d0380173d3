import { Duration } from "effect"

export type CheckPriority = "high" | "low"

/** `pending` until a check has a result; then what the result says. */
export type LinkStatus = "pending" | "ok" | "caution" | "broken"

/** What a completed check found, as stored and reported. */
export interface CheckResult {
  readonly status: Exclude<LinkStatus, "pending">
  readonly errors: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
  readonly danger: ReadonlyArray<string>
  readonly problemSummary: string | null
  readonly suggestedFix: string | null
}

/**
 * One check of one page: a link's uri without its fragment (`targetOf`). A check is shared by every request and batch
 * that asks for that page within their window, whatever fragments their links carry.
 */
export interface CheckRecord {
  readonly id: string
  readonly uri: string
  readonly priority: CheckPriority
  readonly createdAt: Date
  readonly completedAt: Date | null
  /** The page's own result: what a link without a fragment reports. */
  readonly result: CheckResult | null
  /**
   * The `id`s and `<a name>`s of the page, when its check read them (an HTML page that answered 200, within the
   * limits of `domain/fragments`); null otherwise, and then no fragment of the page is judged.
   */
  readonly anchors: ReadonlyArray<string> | null
}

/** A check handed to a worker: it owns it until `claimedUntil` unless it extends or completes it first. */
export interface ClaimedCheck {
  readonly id: string
  readonly uri: string
  /**
   * The key of the per-site limit this check counts against, stored with the check when it was created: its site
   * (`siteOf`), or for checks stored before sites were keyed so, the host with its port.
   */
  readonly host: string
  readonly priority: CheckPriority
  /** How many times a worker has started this check, this claim included. */
  readonly attempts: number
  /** The check reads the page's anchors: some link names a section of it. */
  readonly readsAnchors: boolean
}

export interface Webhook {
  readonly uri: string
  readonly secretToken: string | null
}

export interface BatchRecord {
  readonly id: number
  readonly createdAt: Date
  readonly completedAt: Date | null
  readonly webhook: Webhook | null
  /** The caller who created it (`Caller`'s uid); `null` for a batch made before batches had owners. */
  readonly owner: string | null
  /** The batch's checks in the order its uris were given (a uri given twice, or a page under two fragments, appears twice). */
  readonly checks: ReadonlyArray<CheckRecord>
  /** The uris as given, fragments included: `checks[i]` checks the page of `uris[i]`. */
  readonly uris: ReadonlyArray<string>
  /** Whether the batch's links have their fragments judged. */
  readonly checkFragments: boolean
}

/**
 * How long a claim on a check lasts unless its holder extends it, which a live holder does every `CLAIM_RENEWAL`: the
 * checks of a process that died are free again within this time.
 */
export const CLAIM_DURATION = Duration.seconds(30)
export const CLAIM_RENEWAL = Duration.seconds(10)
