import * as Linkcheck from "@civicstack/core-linkcheck"
import { LINKCHECK_APPLICATION, LinkcheckAccess, LinkcheckGroup } from "@civicstack/core-linkcheck/api"
import * as HttpApi from "@effect/platform/HttpApi"
import { Config, Duration, Effect, Layer, Option } from "effect"
import { ReadinessSections } from "../http/readiness"
import type { ServerConfig } from "../config"
import type { ServiceSettings, ServiceSlot, SharedServices } from "./slot"

/** The link checking section of the server's configuration, read under `LINKCHECK_`. */
export const linkcheckSettings: ServiceSettings<
  "linkcheck",
  { readonly linkcheck: Config.Config.Success<typeof Linkcheck.linkcheckConfig> }
> = {
  name: "linkcheck",
  config: () => Config.all({ linkcheck: Linkcheck.linkcheckConfig }),
  secretVariables: [],
  productionProblems: () => []
}

/** The link checking endpoints as this server serves them, under the server's API identifier. */
const api = HttpApi.make("civicstack").add(LinkcheckGroup)

/** The link checking service of this copy: one service layer shared by its routes and its workers. */
export const linkcheckSlot = (config: ServerConfig, shared: SharedServices): ServiceSlot => {
  const access = shared.accessFor(LinkcheckAccess, LINKCHECK_APPLICATION)
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
    preparedByEveryCopy: false,
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
