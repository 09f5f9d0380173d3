import { Cause, Context, Effect, Layer } from "effect"
import { assembleOutcome, checkFailedOutcome } from "../domain/outcome"
import type { CheckResult } from "../domain/check"
import { defaultCheckerConfig } from "./checker/config"
import type { CheckerConfig } from "./checker/config"
import { followLink } from "./checker/followLink"
import { makeTransport } from "./checker/transport"


export { defaultCheckerConfig } from "./checker/config"
export type { CheckerConfig } from "./checker/config"

const makeChecker = (config: CheckerConfig) =>
  Effect.gen(function*() {
    const transport = yield* makeTransport({
      userAgent: config.userAgent,
      connectTimeout: config.connectTimeout,
      responseTimeout: config.responseTimeout,
      perHostConnections: config.perHostConnections,
      allowPrivateAddresses: config.allowPrivateAddresses,
      resolve: config.lookup
    })
    const check = (uri: string, options: { readonly background: boolean }): Effect.Effect<CheckResult> =>
      followLink(config, transport, uri, options.background).pipe(
        Effect.map(assembleOutcome),
        Effect.catchAllDefect((defect) =>
          Effect.logError("Link check could not be completed", Cause.die(defect)).pipe(Effect.as(checkFailedOutcome))
        )
      )
    return { check }
  })

/** Checks one link: URL rules, then a GET that follows redirects by hand, over pooled keep-alive connections. */
export class Checker extends Context.Tag("@civicstack/core-linkcheck/Checker")<Checker, {
  /** Never fails: an internal failure becomes the warning that the check could not be completed. `background: true` enables the 429/503 retries. */
  readonly check: (uri: string, options: { readonly background: boolean }) => Effect.Effect<CheckResult>
}>() {
  /** Scoped: the connection pools are closed when the layer's scope closes. */
  static readonly layer = (config: Partial<CheckerConfig> = {}): Layer.Layer<Checker> =>
    Layer.scoped(Checker, makeChecker({ ...defaultCheckerConfig, ...config }))
}
