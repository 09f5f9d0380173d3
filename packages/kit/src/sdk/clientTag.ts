import type * as HttpClient from "@effect/platform/HttpClient"
import { Context, type Effect, Layer } from "effect"

/** A client's service tag, with the layer that builds the service. */
export interface ClientTagClass<Self, Id extends string, Service, Options> extends Context.TagClass<Self, Id, Service> {
  /**
   * The service, which needs an `HttpClient`: `FetchHttpClient.layer` from `@effect/platform`, or
   * `NodeHttpClient.layerUndici` from `@effect/platform-node`.
   */
  readonly layer: (options: Options) => Layer.Layer<Self, never, HttpClient.HttpClient>
}

/** The tag of a client's Effect service, with `layer(options)`: the service `make` builds. */
export const ClientTag = <Self, Service>() =>
<const Id extends string, Options>(
  id: Id,
  make: (options: Options) => Effect.Effect<Service, never, HttpClient.HttpClient>
): ClientTagClass<Self, Id, Service, Options> => {
  const tag = Context.Tag(id)<Self, Service>()
  return Object.assign(tag, { layer: (options: Options) => Layer.effect(tag, make(options)) })
}
