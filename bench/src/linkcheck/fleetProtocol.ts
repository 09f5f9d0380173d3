import { Schema } from "effect"

// A search for repeated blocks pairs these structs with SSO's `ServerMetadata`: alike in shape only, as field lists
// of unrelated records are. The bench declares its own records so that it reaches the services only by their wire.

/** The fleet's process writes this prefix and its `FleetReady` JSON as one stdout line once every host listens. */
export const fleetReadyPrefix = "FLEET_READY "

export const FleetReady = Schema.Struct({
  /** The port every fleet host listens on. */
  port: Schema.Int,
  /** The port of the fleet's control API on 127.0.0.1 (`GET /stats`, `POST /reset`). */
  controlPort: Schema.Int
})
export type FleetReady = typeof FleetReady.Type

/** What the fleet has served since its last reset. */
export const FleetStats = Schema.Struct({
  requests: Schema.Int,
  headRequests: Schema.Int,
  /** Requests for a path the plan does not have, or on another host than the link's. */
  unexpected: Schema.Int,
  /** Requests for a planned path of a host that had been requested already since the reset. */
  repeated: Schema.Int,
  inFlight: Schema.Int,
  /** The integral of the requests in progress over time since the reset, in request-milliseconds. */
  inFlightArea: Schema.Number,
  /** The most requests in progress at once on all hosts together. */
  peakInFlight: Schema.Int,
  /** When the first request arrived and the last response was sent, in epoch milliseconds; null before any. */
  firstRequestAt: Schema.NullOr(Schema.Number),
  lastResponseAt: Schema.NullOr(Schema.Number),
  /** Per host, the most requests in progress at once. */
  peakPerHost: Schema.Array(Schema.Int),
  /** Per host, the requests it received. */
  requestsPerHost: Schema.Array(Schema.Int)
})
export type FleetStats = typeof FleetStats.Type
