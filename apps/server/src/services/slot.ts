import type { JobQueue } from "@civicstack/jobs"
import type * as HttpApi from "@effect/platform/HttpApi"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { Effect, Layer } from "effect"
import type { ServiceName } from "../config"
import type { DatabaseNotifications } from "../database"
import type { FastAnswers } from "../http/fastAnswers"
import type { ReadinessSections } from "../http/readiness"

/** What the host provides to every slot's layers and effects. */
export type SlotContext = SqlClient | JobQueue | DatabaseNotifications

/**
 * One service of the server, as its `src/services/<name>.ts` assembles it from its core: its endpoints and their
 * handlers, its background workers and its migrations. Routes and workers share one service layer, so a copy that
 * runs both builds the service once.
 */
export interface ServiceSlot {
  readonly name: ServiceName
  /** What the service is called in its API documentation. */
  readonly title: string
  /** The service's endpoints, under the server's API identifier: served, and published as its OpenAPI document. */
  readonly api: HttpApi.HttpApi<"civicstack", HttpApiGroup.HttpApiGroup.Any, HttpApiDecodeError, never>
  /** The handlers of `api`'s groups (whatever their names: the server serves the slots side by side). */
  readonly routes: Layer.Layer<HttpApiGroup.ApiGroup<"civicstack", any>, never, SlotContext>
  readonly workers: Layer.Layer<never, never, SlotContext>
  /** Registers the service's figures for `/healthcheck/ready` (pending work, its age), over the same service layer. */
  readonly readiness: Layer.Layer<never, never, SlotContext | ReadinessSections>
  /** Registers what the service answers from memory before the HTTP stack (hot reads), over the same service layer. */
  readonly fastAnswers: Layer.Layer<never, never, SlotContext | FastAnswers>
  readonly migrate: Effect.Effect<void, unknown, SqlClient>
  /** What the service sets up once its schema is migrated (first-start records, a bootstrap file); at every start. */
  readonly prepare: Effect.Effect<void, unknown, SlotContext>
}
