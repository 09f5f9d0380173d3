import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { QueueStats } from "@civicstack/jobs"
import { Schema } from "effect"

/** Per service, its backlog: e.g. `linkcheck: {pending_checks, claimed_checks, oldest_claim_age_seconds}`. */
const ServiceFigures = Schema.Record({
  key: Schema.String,
  value: Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.Number) })
})

export class Ready extends Schema.Class<Ready>("Ready")({
  status: Schema.Literal("ok"),
  database: Schema.String,
  queues: Schema.Array(QueueStats),
  services: ServiceFigures
}) {}

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", { error: Schema.String }) {}

/** On the wire the envelope `{"error": ...}`; the tag stays on the TypeScript side. */
const NotReadyResponse = Schema.transform(Schema.Struct({ error: Schema.String }), Schema.typeSchema(NotReady), {
  strict: true,
  decode: (body) => new NotReady(body),
  encode: ({ error }) => ({ error })
}).annotations(HttpApiSchema.annotations({ status: 503 }))

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("live", "/healthcheck/live").addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
  )
  .add(HttpApiEndpoint.get("ready", "/healthcheck/ready").addSuccess(Ready).addError(NotReadyResponse))
{}
