import * as Linkcheck from "@civicstack/core-linkcheck"
import { LinkcheckGroup } from "@civicstack/core-linkcheck/api"
import type { LinkcheckAccess } from "@civicstack/core-linkcheck/api"
import * as HttpApi from "@effect/platform/HttpApi"
import { Duration, Effect, Layer, Option } from "effect"
import { ReadinessSections } from "../http/readiness"
import type { ServerConfig } from "../config"
import type { ServiceSlot, SlotContext } from "./slot"

/** The link checking endpoints as this server serves them, under the server's API identifier. */
const api = HttpApi.make("civicstack").add(LinkcheckGroup)

/** The link checking service of this copy: one service layer shared by its routes and its workers. */
export const linkcheckSlot = (
  config: ServerConfig,
  access: Layer.Layer<LinkcheckAccess, never, SlotContext>
): ServiceSlot => {
  const service = Linkcheck.layerSql({
    ...config.linkcheck,
    shutdownGracePeriod: Duration.seconds(config.shutdownGraceSeconds)
  })
  return {
    name: "linkcheck",
    title: "civicstack link checking",
    api,
    migrate: Linkcheck.migrate,
    prepare: Effect.void,
    routes: Linkcheck.linkcheckHandlers(api).pipe(Layer.provide(service), Layer.provide(access)),
    workers: Linkcheck.workers.pipe(Layer.provide(service)),
    fastAnswers: Layer.empty,
    readiness: Layer.effectDiscard(Effect.gen(function*() {
      const linkChecker = yield* Linkcheck.LinkChecker
      const sections = yield* ReadinessSections
      yield* sections.add("linkcheck", Effect.map(linkChecker.workload, (workload) => ({
        pending_checks: workload.pendingChecks,
        claimed_checks: workload.claimedChecks,
        oldest_claim_age_seconds: Option.match(Option.fromNullable(workload.oldestClaimAge), {
          onNone: () => null,
          onSome: (age) => Math.round(Duration.toSeconds(age))
        })
      })))
    })).pipe(Layer.provide(service))
  }
}
