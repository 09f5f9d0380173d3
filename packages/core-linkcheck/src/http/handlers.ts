import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Effect } from "effect"
import type { Layer } from "effect"
import { BatchNotFound } from "../api/errors"
import { LinkcheckApi } from "../api/LinkcheckApi"
import { LinkChecker } from "../services/LinkChecker"

/** Batch ids are positive integers; anything else names no batch. */
const parseBatchId = (text: string) => (/^[1-9]\d{0,15}$/.test(text) ? Number(text) : undefined)

const handlersLayer = HttpApiBuilder.group(LinkcheckApi, "linkcheck", (handlers) =>
  Effect.gen(function*() {
    const linkChecker = yield* LinkChecker
    return handlers
      .handle("check", ({ urlParams }) => Effect.orDie(linkChecker.check(urlParams)))
      .handle("createBatch", ({ payload }) =>
        linkChecker.createBatch(payload).pipe(
          Effect.map(({ completedAtOnce, report }) =>
            completedAtOnce ? { ...report, outcome: "completed" as const } : { ...report, outcome: "accepted" as const }
          ),
          Effect.orDie
        ))
      .handle("getBatch", ({ path }) => {
        const id = parseBatchId(path.id)
        return id === undefined
          ? new BatchNotFound({ error: "Not Found" })
          : linkChecker.getBatch(id).pipe(Effect.catchTag("StoreError", Effect.die))
      })
  }))

/**
 * The handlers of the link checking endpoints for any HttpApi that includes `LinkcheckGroup` (the reference
 * server's, or your own). Storage failures are defects here: they answer 500 and are logged.
 *
 * A group's handlers only add routes to the builder's shared router, whatever the API's identifier, so the layer
 * built for `LinkcheckApi` serves any API that contains the group; the cast carries that over to the types.
 */
export const linkcheckHandlers = <ApiId extends string>(_api: { readonly identifier: ApiId }) => handlersLayer as unknown as Layer.Layer<HttpApiGroup.ApiGroup<ApiId, "linkcheck">, never, LinkChecker>
