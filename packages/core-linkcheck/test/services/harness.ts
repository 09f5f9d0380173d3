import { layerMemory as jobQueueMemory } from "@civicstack/jobs"
import { runWorker } from "@civicstack/jobs"
import { Effect, Layer } from "effect"
import { Checker } from "../../src/services/Checker"
import { runScheduler } from "../../src/services/CheckScheduler"
import type { SchedulerOptions } from "../../src/services/CheckScheduler"
import { CheckSignal } from "../../src/services/CheckSignal"
import { linkCheckerLayer } from "../../src/services/LinkChecker"
import { webhookTransportLayer } from "../../src/services/webhookTransport"
import { WebhookDelivery } from "../../src/services/webhookJob"
import { deliverWebhook } from "../../src/services/WebhookSender"
import type { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import type { FixtureFleet } from "../fixtures/fleet"

/** Everything a host provides around the store: checker, signal, job queue in memory and webhook transport. */
export const linkcheckServices = (fleet: FixtureFleet) =>
  Layer.mergeAll(
    // Generous timeouts: the fixture fleet shares this process's CPU with the checks, so a loaded test machine
    // must not turn local pages into slow or unavailable ones.
    Checker.layer({
      allowPrivateAddresses: true,
      lookup: fleet.lookup,
      responseTimeout: "1 minute",
      slowThreshold: "1 minute"
    }),
    CheckSignal.layer,
    jobQueueMemory,
    webhookTransportLayer({ allowPrivateAddresses: true, lookup: fleet.lookup })
  )

/** The LinkChecker service alone: checks run only inside requests. */
export const linkcheckWithoutWorkers = (fleet: FixtureFleet, store: Layer.Layer<LinkcheckStore, unknown>) =>
  linkCheckerLayer.pipe(Layer.provideMerge(linkcheckServices(fleet)), Layer.provideMerge(store))

/**
 * The LinkChecker service with its scheduler and webhook worker running in the layer's scope. Under a TestClock give
 * a long `pollInterval`, so that moving the clock forward wakes the workers a few times rather than thousands.
 */
export const runningLinkcheck = (
  fleet: FixtureFleet,
  store: Layer.Layer<LinkcheckStore, unknown>,
  scheduler: Partial<SchedulerOptions> = {}
) => {
  const pollInterval = scheduler.pollInterval ?? "50 millis"
  const workers = Layer.scopedDiscard(Effect.forkScoped(Effect.all([
    runScheduler({ ...scheduler, pollInterval }),
    runWorker(WebhookDelivery, ({ batchId }) => deliverWebhook(batchId), { concurrency: 4, pollInterval })
  ], { concurrency: "unbounded" })))
  return Layer.merge(linkCheckerLayer, workers).pipe(
    Layer.provideMerge(linkcheckServices(fleet)),
    Layer.provideMerge(store)
  )
}
