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
import { LinkcheckParts } from "./LinkcheckParts"

const DEFAULT_CHECKED_WITHIN = Duration.seconds(DEFAULT_CHECKED_WITHIN_SECONDS)

/**
 * Lets woken workers send their claim before the caller goes on: waking takes a few turns of the fiber scheduler,
 * and a claim sent after a batch's transaction began would, on PGlite, wait for its end. Real time, not the Clock's,
 * so that it also passes under a TestClock.
 */
const letWorkersClaim = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))

/**
 * A batch of more links than this has its checks written before the batch, this many first and then
 * `CHECKS_PER_WRITE` at a time, so that checking starts at once.
 */
export const EARLY_START_LINKS = 256
const CHECKS_PER_WRITE = 1000

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
   * Writing a batch of thousands of links takes a while, so a larger batch's checks are written first, a group at a
   * time, and the batch then takes them up as checks created since the request came. A group of high priority is
   * claimed in the same step for this process's scheduler, which starts it at once; what it does not claim waits for
   * any worker's claim. Should the batch fail to be written, those checks still run, and their results serve the
   * caller's retry.
   */
  const writeChecksAhead = (
    uris: ReadonlyArray<string>,
    checkFragments: boolean,
    priority: CheckPriority,
    window: Date | null,
    at: Date
  ) =>
    Effect.gen(function*() {
      const pages = pagesOf(uris.map(targetOf), checkFragments)
      if (pages.length <= EARLY_START_LINKS) return false
      let created = 0
      for (let from = 0, to = EARLY_START_LINKS; from < pages.length; from = to, to += CHECKS_PER_WRITE) {
        const group = { pages: pages.slice(from, to), priority, reuseSince: window, now: at }
        const written = yield* localClaims.claimWhile((claim) =>
          claim === undefined || priority === "low"
            ? Effect.map(store.createChecks(group), (checks) => ({ created: checks, claimed: [] }))
            : store.createAndClaimChecks({ ...group, claim })
        )
        created += written.created.length
        if (written.claimed.length < written.created.length) {
          yield* signal.notify
          yield* letWorkersClaim
        }
      }
      return created > 0
    })

  const createBatch = (request: BatchRequest) =>
    Effect.gen(function*() {
      const at = yield* now
      const priority = request.priority ?? "high"
      const window = reuseSince(at, request.checkedWithin)
      const checkFragments = request.checkFragments ?? settings.checkFragments
      const startedEarly = yield* writeChecksAhead(request.uris, checkFragments, priority, window, at)
      const batch = yield* completion.createBatch({
        uris: request.uris,
        checkFragments,
        priority,
        reuseSince: startedEarly ? window ?? at : window,
        webhook: request.webhook ?? null,
        ...(request.owner === undefined ? {} : { owner: request.owner }),
        traceParent: yield* currentTraceParent,
        now: at
      })
      if (batch.completedAt === null) {
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

