import type { JobQueue } from "@civicstack/jobs"
import type { AccessCheck } from "@civicstack/kit/access"
import type * as HttpApi from "@effect/platform/HttpApi"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { Config, Context, Effect, Layer } from "effect"
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
  readonly name: string
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
  /** Whether every copy runs `prepare`, whatever it serves (the accounts that guard every other service's API). */
  readonly preparedByEveryCopy: boolean
}

/** What one slot offers the others. */
export interface SharedServices {
  /**
   * The layer of an API's access middleware that lets in bearer tokens of users with `signin` on `application` and
   * refuses the rest with 401 or 403.
   */
  readonly accessFor: <Self>(tag: Context.Tag<Self, AccessCheck>, application: string) => Layer.Layer<Self, never, SlotContext>
}

/** How the server reads a service's settings from the environment, beside its own. */
export interface ServiceSettings<Name extends string, Sections> {
  readonly name: Name
  /** The service's sections of the server's configuration; `dataDir` is where the files it keeps go. */
  readonly config: (dataDir: string) => Config.Config<Sections>
  /** Variables whose values may hold a password or key: a bad one is named, never shown. */
  readonly secretVariables: ReadonlyArray<string>
  /** What must also hold when `NODE_ENV=production`: one line per problem. */
  readonly productionProblems: (sections: Sections) => ReadonlyArray<string>
}
