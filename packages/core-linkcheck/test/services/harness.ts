import { layerMemory as jobQueueMemory } from "@civicstack/jobs"
import { Clock, Effect, Layer } from "effect"
import { serviceOver, workers } from "../../src/layers"
import type { LinkcheckSettings } from "../../src/settings"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import type { FixtureFleet } from "../fixtures/fleet"

/**
 * Settings for checks against the fixture fleet: its resolver, private addresses allowed, and generous timeouts,
 * because the fleet shares this process's CPU with the checks and a loaded test machine must not turn local pages
 * into slow or unavailable ones. Under a TestClock give a long `pollInterval`, so that moving the clock forward wakes
 * the workers a few times rather than thousands.
 */
export const fleetSettings = (fleet: FixtureFleet, overrides: Partial<LinkcheckSettings> = {}): Partial<LinkcheckSettings> => ({
  allowPrivateAddresses: true,
  resolver: fleet.lookup,
  ...overrides,
  inspector: { responseTimeout: "1 minute", slowThreshold: "1 minute", ...overrides.inspector },
  scheduler: { pollInterval: "50 millis", ...overrides.scheduler }
})

/**
 * The service as `layerSql`/`layerMemory` assemble it, over a store the test chooses (so that two copies can share
 * one) and a job queue in memory; the store stays visible to the test. Checks run only inside requests.
 */
export const linkcheckWithoutWorkers = (
  fleet: FixtureFleet,
  store: Layer.Layer<LinkcheckStore, unknown>,
  settings: Partial<LinkcheckSettings> = {}
) => serviceOver(fleetSettings(fleet, settings)).pipe(Layer.provideMerge(Layer.merge(store, jobQueueMemory)))

/** The same with its `workers` running in the layer's scope. */
export const runningLinkcheck = (
  fleet: FixtureFleet,
  store: Layer.Layer<LinkcheckStore, unknown>,
  settings: Partial<LinkcheckSettings> = {}
) => workers.pipe(Layer.provideMerge(linkcheckWithoutWorkers(fleet, store, settings)))

/** Claims every claimable check for `workerId`, as a worker without limits would: what nobody else holds. */
export const claimEverything = (workerId: string, now?: Date) =>
  Effect.gen(function*() {
    const store = yield* LinkcheckStore
    const at = now ?? new Date(yield* Clock.currentTimeMillis)
    return yield* store.claimChecks({
      workerId,
      now: at,
      claimUntil: new Date(at.getTime() + 60_000),
      limit: 10_000,
      perHost: 10_000,
      workersAliveSince: at,
      aheadPerHost: 0,
      heldByHost: new Map(),
      lowPriorityQuota: 0
    })
  })
