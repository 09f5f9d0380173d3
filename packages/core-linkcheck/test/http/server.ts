import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { servedOnLoopback } from "@civicstack/kit/testing"
import { Layer } from "effect"
import { LinkcheckGroup } from "../../src/api/LinkcheckApi"
import { linkcheckHandlers } from "../../src/http/handlers"
import { layerOpenAccess } from "../../src/layers"
import type { LinkChecker } from "../../src/services/LinkChecker"
import type { LinkcheckParts } from "../../src/services/LinkcheckParts"

export { baseUrl } from "@civicstack/kit/testing"

/** The link checking endpoints under a host's own API identifier, as a host serves them. */
const api = HttpApi.make("testhost").add(LinkcheckGroup)

/**
 * The handlers served on 127.0.0.1 (a free port) over `service`, every caller let in. Refusals of bad input are the
 * host's to render (apps/server's envelope), so their tests stay with the server.
 */
export const servedOver = <ROut, E>(service: Layer.Layer<ROut | LinkChecker | LinkcheckParts, E>) =>
  servedOnLoopback(HttpApiBuilder.api(api).pipe(Layer.provide(linkcheckHandlers(api)), Layer.provide(layerOpenAccess)), service)
