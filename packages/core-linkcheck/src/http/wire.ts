import { Duration } from "effect"
import type { CheckParams, CreateBatchBody } from "../api/requests"
import type { BatchRequest, CheckRequest } from "../services/LinkChecker"

/** The mapping between the service's types and the snake_case wire contract of `./api`, used at every seam. */

export { batchToWire, linkToWire } from "../domain/reports"

export const checkRequestFromWire = (params: CheckParams): CheckRequest => ({
  uri: params.uri,
  checkedWithin: Duration.seconds(params.checked_within),
  synchronous: params.synchronous,
  checkFragments: params.check_fragments
})

export const batchRequestFromWire = (body: CreateBatchBody): BatchRequest => ({
  uris: body.uris,
  checkedWithin: Duration.seconds(body.checked_within),
  priority: body.priority,
  checkFragments: body.check_fragments,
  webhook: body.webhook_uri === undefined
    ? undefined
    : { uri: body.webhook_uri, secretToken: body.webhook_secret_token ?? null }
})
