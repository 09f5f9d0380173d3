import type { JobQueueError } from "@civicstack/jobs"
import { currentTraceParent, now } from "@civicstack/kit"
import type { StoreError } from "@civicstack/kit"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { BatchNotFound } from "../api/errors"
import { DEFAULT_CHECKED_WITHIN_SECONDS } from "../api/requests"
import type { CheckPriority, Webhook } from "../domain/check"
import { CLAIM_DURATION, CLAIM_RENEWAL } from "../domain/check"
import { namesSection, pagesOf, targetOf } from "../domain/fragments"
import type { Batch, Link } from "../domain/reports"
import { linkOf, toBatch } from "../domain/reports"
import { siteOf } from "../domain/site"
import type { ClaimRequest } from "../storage/LinkcheckStore"
import { LinkcheckParts } from "./LinkcheckParts"
import type { ClaimingWrite } from "./LocalClaims"

const DEFAULT_CHECKED_WITHIN = Duration.seconds(DEFAULT_CHECKED_WITHIN_SECONDS)

/**
 * Lets woken workers send their claim before the caller goes on: waking takes a few turns of the fiber scheduler,
 * and a claim sent after a batch's transaction began would, on PGlite, wait for its end. Real time, not the Clock's,
 * so that it also passes under a TestClock.
 */
const letWorkersClaim = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))

/** Links of a larger batch that are given checks before the batch is written, so that checking starts at once. */
export const EARLY_START_LINKS = 256

export interface CheckRequest {
  readonly uri: string
  /** A check of the same uri created this recently is reused; zero always makes a new check. */
  readonly checkedWithin?: Duration.DurationInput | undefined
  /** Check inside the call (reusing only completed checks) instead of queueing the check. */
  readonly synchronous?: boolean | undefined
  /** Look the uri's fragment up on its page (`LinkcheckSettings.checkFragments` when not given). */
  readonly checkFragments?: boolean | undefined
}

export interface BatchRequest {
  /** In the order the report lists them; the same uri twice is checked once. */
  readonly uris: ReadonlyArray<string>
  readonly checkedWithin?: Duration.DurationInput | undefined
  readonly priority?: CheckPriority | undefined
  /** Called once when the batch completes, signed when it has a secret token. */
  readonly webhook?: Webhook | undefined
  /** Look the uris' fragments up on their pages (`LinkcheckSettings.checkFragments` when not given). */
  readonly checkFragments?: boolean | undefined
  /** The caller who creates it (`Caller`'s uid): `getBatch` shows it to them alone, and to callers who see all. */
  readonly owner?: string | undefined
}

/** Whose batches `getBatch` may show: only the owner's, or every batch. */
export type BatchViewer = { readonly owner: string } | "every batch"

export interface CreatedBatch {
  readonly batch: Batch
  /** True when every link already had a result, so the batch was complete when created. */
  readonly completedAtOnce: boolean
}

/** What waits and who works on it: for health checks and dashboards, so a stall shows. */
export interface Workload {
  /** Checks without a result yet. */
  readonly pendingChecks: number
  /** Of those, the ones a live worker or request is checking now. */
  readonly claimedChecks: number
  /** How long the oldest of those has been claimed; null when none is. */
  readonly oldestClaimAge: Duration.Duration | null
}

const reuseSince = (at: Date, checkedWithin: Duration.DurationInput | undefined) => {
  const window = Duration.toMillis(checkedWithin ?? DEFAULT_CHECKED_WITHIN)
  return window === 0 ? null : new Date(at.getTime() - window)
}

const makeLinkChecker = Effect.gen(function*() {
  const { completion, inspector, localClaims, settings, signal, slots, store } = yield* LinkcheckParts

  /**
   * Inspects in one of the slots of the link's site that queued checks use too, taken ahead of them. Waiting for the
   * slot counts against the check's deadline: a site whose slots stay busy that long gets the answer of a website
   * that did not respond in time, with no request made.
   */
  const inspectInSlot = (page: string, readsAnchors: boolean) =>
    Effect.gen(function*() {
      const deadline = yield* inspector.checkTimeout
      const [waited] = yield* Effect.timed(slots.hold(siteOf(page)).pipe(Effect.timeoutOption(deadline)))
      return yield* inspector.inspect(page, { background: false, timeSpent: waited, readsAnchors })
    }).pipe(Effect.scoped)

  /** Runs a new check of a page inside the call, holding its claim so that no worker starts it too. */
  const checkNow = (page: string, readsAnchors: boolean, at: Date) =>
    Effect.gen(function*() {
      const workerId = `request-${crypto.randomUUID()}`
      const claimUntil = Effect.map(now, (at) => new Date(at.getTime() + Duration.toMillis(CLAIM_DURATION)))
      const created = yield* store.createCheck({
        uri: page,
        readsAnchors,
        priority: "high",
        now: at,
        claim: { workerId, until: yield* claimUntil }
      })
      const keepClaim = Effect.flatMap(claimUntil, (until) => store.extendClaims(workerId, [created.id], until)).pipe(
        Effect.ignoreLogged,
        Effect.delay(CLAIM_RENEWAL),
        Effect.forever
      )
      const { anchors, result } = yield* Effect.raceFirst(inspectInSlot(page, readsAnchors), keepClaim)
      const completedAt = yield* now
      yield* completion.recordResults({ workerId, now: completedAt, results: [{ id: created.id, result, anchors }] })
      return { ...created, completedAt, result, anchors }
    })

  const check = ({ checkedWithin, checkFragments = settings.checkFragments, synchronous = false, uri }: CheckRequest) =>
    Effect.gen(function*() {
      const at = yield* now
      const { fragment, page } = targetOf(uri)
      const readsAnchors = checkFragments && namesSection(fragment)
      const since = reuseSince(at, checkedWithin)
      if (since !== null) {
        const existing = yield* store.findCheck(page, { since, completedOnly: synchronous, readsAnchors })
        if (Option.isSome(existing)) return linkOf(existing.value, uri, checkFragments)
      }
      if (synchronous) return linkOf(yield* checkNow(page, readsAnchors, at), uri, checkFragments)
      const created = yield* store.createCheck({ uri: page, readsAnchors, priority: "high", now: at })
      yield* signal.notify
      return linkOf(created, uri, checkFragments)
    })

  /**
   * Writing a batch of thousands of links takes a while, so its first links get checks of their own first and the
   * workers start on them meanwhile; the batch then takes them up as checks created since the request came. Should
   * the batch fail to be written, those checks still run, and their results serve the caller's retry.
   */
  const startFirstLinks = (
    uris: ReadonlyArray<string>,
    checkFragments: boolean,
    priority: CheckPriority,
    window: Date | null,
    at: Date
  ) =>
    Effect.gen(function*() {
      const pages = pagesOf(uris.map(targetOf), checkFragments)
      if (pages.length <= EARLY_START_LINKS) return false
      const first = { pages: pages.slice(0, EARLY_START_LINKS), priority, reuseSince: window, now: at }
      const written = yield* claimingForThisProcess(priority, EARLY_START_LINKS, (claim) =>
        claim === undefined
          ? Effect.map(store.createChecks(first), (created) => ({ created, claimed: [] }))
          : store.createAndClaimChecks({ ...first, claim }))
      if (written.created.length === 0) return false
      if (written.claimed.length < written.created.length) {
        yield* signal.notify
        yield* letWorkersClaim
      }
      return true
    })

  /**
   * New checks of high priority are claimed as they are written for the scheduler of this process, if one runs here,
   * which starts them once they are written. Low priority is left to the scheduler's own claims, which keep its share.
   */
  const claimingForThisProcess = <A extends ClaimingWrite, E>(
    priority: CheckPriority,
    wanted: number,
    write: (claim: ClaimRequest | undefined) => Effect.Effect<A, E>
  ) => (priority === "high" ? localClaims.claimWhile(wanted, write) : write(undefined))

  const createBatch = (request: BatchRequest) =>
    Effect.gen(function*() {
      const at = yield* now
      const priority = request.priority ?? "high"
      const window = reuseSince(at, request.checkedWithin)
      const checkFragments = request.checkFragments ?? settings.checkFragments
      const startedEarly = yield* startFirstLinks(request.uris, checkFragments, priority, window, at)
      const newBatch = {
        uris: request.uris,
        checkFragments,
        priority,
        reuseSince: startedEarly ? window ?? at : window,
        webhook: request.webhook ?? null,
        ...(request.owner === undefined ? {} : { owner: request.owner }),
        traceParent: yield* currentTraceParent,
        now: at
      }
      const { batch, claimed } = yield* claimingForThisProcess(
        priority,
        request.uris.length,
        (claim) => completion.createBatch(newBatch, claim)
      )
      if (batch.completedAt === null && claimed.length < batch.checks.length) {
        yield* signal.notify
        // before this fiber builds the (up to 5000 links) answer
        yield* letWorkersClaim
      }
      return { batch: toBatch(batch), completedAtOnce: batch.completedAt !== null }
    })

  const getBatch = (id: number, viewer: BatchViewer) =>
    store.findBatch(id, viewer === "every batch" ? undefined : viewer.owner).pipe(
      Effect.flatMap(Option.match({
        onNone: () => new BatchNotFound({ error: "Not Found" }),
        onSome: (batch) => Effect.succeed(toBatch(batch))
      }))
    )

  const workload = Effect.gen(function*() {
    const at = yield* now
    const figures = yield* store.workload(at)
    return {
      pendingChecks: figures.pending,
      claimedChecks: figures.claimed,
      oldestClaimAge: figures.oldestClaimAt === null
        ? null
        : Duration.millis(Math.max(0, at.getTime() - figures.oldestClaimAt.getTime()))
    }
  })

  return { check, createBatch, getBatch, workload }
})

/** The link checking service: single checks, batches and their reports. */
export class LinkChecker extends Context.Tag("@civicstack/core-linkcheck/LinkChecker")<LinkChecker, {
  readonly check: (request: CheckRequest) => Effect.Effect<Link, StoreError | JobQueueError>
  readonly createBatch: (request: BatchRequest) => Effect.Effect<CreatedBatch, StoreError | JobQueueError>
  /** A batch the viewer may see; any other is `BatchNotFound`, as an unknown one is. */
  readonly getBatch: (id: number, viewer: BatchViewer) => Effect.Effect<Batch, BatchNotFound | StoreError>
  readonly workload: Effect.Effect<Workload, StoreError>
}>() {
  /** The request side of the service, over the parts that `layerSql` or `layerMemory` built. */
  static readonly layer: Layer.Layer<LinkChecker, never, LinkcheckParts> = Layer.effect(LinkChecker, makeLinkChecker)
}

