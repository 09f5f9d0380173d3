export { isIpAddress, isPublicAddress } from "./addresses"
export {
  type AgentSettings,
  checkDestination,
  type GuardSettings,
  makeAgent,
  makeOutboundClient,
  type OutboundClient,
  type OutboundClientSettings,
  type OutboundRequest,
  type OutboundResponse
} from "./client"
export { OutboundFailure, OutboundFailureReason, toOutboundFailure } from "./failures"
export {
  guardedLookup,
  REFUSED_ADDRESS_CODE,
  RefusedAddressError,
  type ResolvedAddress,
  type Resolver,
  systemResolver
} from "./lookup"
