import { failureMapping } from "@civicstack/kit/sdk"
import { SsoClientError } from "./errors"

/** Leaves the contract's own errors as they are and turns transport and decoding failures into `SsoClientError`. */
export const refineFailures = failureMapping({
  service: "the SSO",
  clientError: (fields) => new SsoClientError(fields)
})
