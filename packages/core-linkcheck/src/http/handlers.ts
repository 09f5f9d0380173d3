import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Caller, isAdmin } from "@civicstack/kit/access"
import { Effect } from "effect"
import { BatchNotFound } from "../api/errors"
import type { LinkcheckGroup } from "../api/LinkcheckApi"
import { LinkChecker } from "../services/LinkChecker"
import { batchJson } from "../domain/reports"
import type { Batch } from "../domain/reports"
import { batchRequestFromWire, checkRequestFromWire, linkToWire } from "./wire"

/** Batch ids are positive integers; anything else names no batch. */
const parseBatchId = (text: string) => (/^[1-9]\d{0,15}$/.test(text) ? Number(text) : undefined)

/**
 * A batch's report as JSON text written by hand (`batchJson`), not by the endpoint's schema, which would encode its up
 * to 5000 links one by one; `test/domain/reports.test.ts` checks that the text is the schema's.
 */
const batchAnswer = (batch: Batch, status: 200 | 201 | 202) =>
  HttpServerResponse.text(batchJson(batch), { status, contentType: "application/json" })

/**
 * The handlers of the link checking endpoints, for an HttpApi made of `LinkcheckGroup` under the host's own API
 * identifier (`HttpApi.make("myhost").add(LinkcheckGroup)`), so they serve inside the host's API. Storage failures are
 * defects here: the host turns them into 503 or 500 answers.
 */
export const linkcheckHandlers = <ApiId extends string, E, R>(api: HttpApi.HttpApi<ApiId, typeof LinkcheckGroup, E, R>) =>
  HttpApiBuilder.group(api, "linkcheck", (handlers) =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      return handlers
        .handle("check", ({ urlParams }) =>
          linkChecker.check(checkRequestFromWire(urlParams)).pipe(Effect.map(linkToWire), Effect.orDie))
        .handle("createBatch", ({ payload }) =>
          Effect.flatMap(Caller, (caller) => linkChecker.createBatch({ ...batchRequestFromWire(payload), owner: caller.uid })).pipe(
            Effect.map(({ batch, completedAtOnce }) => batchAnswer(batch, completedAtOnce ? 201 : 202)),
            Effect.orDie
          ))
        .handle("getBatch", ({ path }) =>
          Effect.gen(function*() {
            const id = parseBatchId(path.id)
            if (id === undefined) return yield* new BatchNotFound({ error: "Not Found" })
            const caller = yield* Caller
            const batch = yield* linkChecker.getBatch(id, isAdmin(caller) ? "every batch" : { owner: caller.uid })
            return batchAnswer(batch, 200)
          }).pipe(Effect.catchTag("StoreError", Effect.die)))
    }))
