import { Effect, Layer } from "effect"
import { LinkcheckAccess } from "../api/access"

/**
 * Lets every caller use the link checking API: for a host that checks its callers itself, in front of these
 * handlers. The reference server checks single sign-on tokens instead.
 */
export const layerOpenAccess: Layer.Layer<LinkcheckAccess> = Layer.succeed(LinkcheckAccess, { bearer: () => Effect.void })
