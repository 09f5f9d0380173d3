import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { invalidRequestsRefused, servedOnLoopback } from "@civicstack/kit/testing"
import { Layer } from "effect"
import { AlertsCallbacksGroup, AlertsGroup, AlertsHealthGroup } from "../../src/api/AlertsApi"
import { alertsHandlers } from "../../src/http/handlers"
import { layerOpenAccess } from "../../src/layers"
import type { Alerts } from "../../src/services/Alerts"
import type { AlertsParts } from "../../src/services/AlertsParts"

export { baseUrl } from "@civicstack/kit/testing"

/** The alert endpoints under a host's own API identifier, as a host serves them. */
const api = HttpApi.make("testhost").add(AlertsGroup).add(AlertsHealthGroup).add(AlertsCallbacksGroup)

/**
 * The handlers served on 127.0.0.1 (a free port) over `service`, every caller let in, behind the host's answer to
 * input the router refuses before any handler runs (a path id that is not a number, a malformed bracket query).
 * Bodies never get there: the handlers decode them into the contract's own 400 and 422.
 */
export const servedOver = <ROut, E>(service: Layer.Layer<ROut | Alerts | AlertsParts, E>) =>
  servedOnLoopback(
    HttpApiBuilder.api(api).pipe(
      Layer.provide(alertsHandlers(api)),
      Layer.provide(invalidRequestsRefused),
      Layer.provide(layerOpenAccess)
    ),
    service
  )
