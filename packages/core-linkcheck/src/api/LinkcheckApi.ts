import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { json, jsonWithOutcome } from "@civicstack/kit/access"
import { Schema } from "effect"
import type { Forbidden, Unauthenticated } from "./access"
import { LinkcheckAccess } from "./access"
import { BatchNotFoundResponse, InvalidRequestResponse } from "./errors"
import type { BatchNotFound, InvalidRequest } from "./errors"

/**
 * The errors the endpoints declare. Also gives declaration files a local name for each, which the SDK's bundled
 * declarations need: otherwise they are named through a path that does not exist once bundled.
 */
export type LinkcheckError = InvalidRequest | BatchNotFound | Unauthenticated | Forbidden
import { BatchReport, LinkReport } from "./reports"
import { CheckParams, CreateBatchBody } from "./requests"

/** `POST /batch` answers 201 when every link already had a result and 202 otherwise, with the same body. */
export const CompletedBatch = jsonWithOutcome(BatchReport, "completed")
export const AcceptedBatch = jsonWithOutcome(BatchReport, "accepted")

export class LinkcheckGroup extends HttpApiGroup.make("linkcheck")
  .add(
    HttpApiEndpoint.get("check", "/check")
      .setUrlParams(CheckParams)
      .addSuccess(json(LinkReport))
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.post("createBatch", "/batch")
      .setPayload(CreateBatchBody)
      .addSuccess(CompletedBatch, { status: 201 })
      .addSuccess(AcceptedBatch, { status: 202 })
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.get("getBatch", "/batch/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(json(BatchReport))
      .addError(BatchNotFoundResponse)
  )
  .middleware(LinkcheckAccess)
{}

/** The link checking API on its own, as client apps and the SDK see it. */
export class LinkcheckApi extends HttpApi.make("linkcheck").add(LinkcheckGroup) {}
