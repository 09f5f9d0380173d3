import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { SubscriberListQuery } from "../../src/api/index"
import {
  AlertsApi,
  keyedRecord,
  SubscriberList,
  SubscriberListNotFound,
  SubscriptionNotFound
} from "../../src/api/index"
import { layerOpenAccess } from "../../src/index"

const at = new Date("2024-03-01T12:00:00.000Z")

/** A list that shows the criteria the server decoded from the request. */
const listEchoing = (query: SubscriberListQuery, title = "Echo") =>
  new SubscriberList({
    id: 1,
    title,
    slug: "echo",
    subscription_url: "http://localhost/email/subscriptions/new?topic_id=echo",
    external_delivery_id: "echo",
    document_type: query.document_type ?? "",
    email_document_supertype: "",
    government_document_supertype: "",
    tags: query.tags,
    links: query.links,
    content_id: null,
    created_at: at,
    updated_at: at
  })

const notHere = Effect.die("not served by this test")

/** The contract served by stand-in handlers: what the router and the schemas do, without any service behind them. */
const StandIns = HttpApiBuilder.group(AlertsApi, "alerts", (handlers) =>
  handlers
    .handle("createSubscriberList", ({ payload }) =>
      Effect.succeed({
        subscriber_list: listEchoing({ tags: payload.tags ?? keyedRecord([]), links: payload.links ?? keyedRecord([]) }, payload.title),
        outcome: payload.title === "New" ? "created" as const : "found" as const
      }))
    .handle("findSubscriberList", ({ urlParams }) =>
      Object.keys(urlParams.tags).length + Object.keys(urlParams.links).length === 0 && urlParams.document_type === undefined
        ? Effect.fail(new SubscriberListNotFound({ error: "Could not find the subscriber list" }))
        : Effect.succeed({ subscriber_list: listEchoing(urlParams) }))
    .handle("getSubscriberList", () => notHere)
    .handle("createNotification", () => notHere)
    .handle("createContentChange", () => Effect.succeed({ message: "Notification queued for sending" as const }))
    .handle("getSubscriberSubscriptions", () => notHere)
    .handle("changeSubscriberAddress", () => notHere)
    .handle("deactivateSubscriber", () => notHere)
    .handle("createSubscription", () => notHere)
    .handle("getSubscription", () => Effect.fail(new SubscriptionNotFound({ error: "Could not find the subscription" })))
    .handle("changeSubscriptionFrequency", () => notHere)
    .handle("unsubscribe", () => Effect.void)
    .handle("sendAuthToken", () => notHere)
    .handle("sendSubscriptionAuthToken", () => notHere))

const HealthStandIn = HttpApiBuilder.group(AlertsApi, "alertsHealth", (handlers) => handlers.handle("healthcheck", () => notHere))

const OpenAccess = layerOpenAccess

const Server = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(AlertsApi).pipe(Layer.provide(StandIns), Layer.provide(HealthStandIn), Layer.provide(OpenAccess))),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
)

const baseUrl = HttpServer.addressFormattedWith(Effect.succeed)

describe("AlertsApi on the wire", () => {
  const run = <A, E>(body: (url: string) => Effect.Effect<A, E>) =>
    Effect.scoped(Effect.flatMap(baseUrl, body)).pipe(Effect.provide(Server))

  it.live("the router hands the bracket forms to the query schema, hostile names included", () =>
    run((url) =>
      Effect.promise(async () => {
        const query = "tags[__proto__][]=x&tags[format][any][]=a&tags[format][]=b&links[taxon][all][]=t1&links[taxon][all][]=t2"
        const response = await fetch(`${url}/subscriber-lists?${query}`)
        expect(response.status).toBe(200)
        const body = await response.json() as { subscriber_list: { tags: unknown; links: unknown } }
        expect(JSON.stringify(body.subscriber_list.tags)).toBe('{"__proto__":["x"],"format":{"any":["a","b"]}}')
        expect(body.subscriber_list.links).toEqual({ taxon: { all: ["t1", "t2"] } })

        const single = await (await fetch(`${url}/subscriber-lists?tags[format]=guide`)).json() as typeof body
        expect(single.subscriber_list.tags).toEqual({ format: ["guide"] })

        const malformed = await fetch(`${url}/subscriber-lists?tags[format][some][]=guide`)
        expect([400, 422]).toContain(malformed.status)
        await malformed.arrayBuffer()
        const notFound = await fetch(`${url}/subscriber-lists?unknown=1`)
        expect(notFound.status).toBe(404)
        expect(await notFound.json()).toEqual({ error: "Could not find the subscriber list" })
      })
    ))

  it.live("a client derived from the contract sends criteria the server reads back", () =>
    run((url) =>
      Effect.gen(function*() {
        const client = yield* HttpApiClient.make(AlertsApi, { baseUrl: url })
        const query: SubscriberListQuery = {
          tags: keyedRecord([["constructor", { all: ["c1", "c2"] }], ["format", ["guide"]]]),
          links: keyedRecord([["taxon", { any: ["t1"] }]]),
          document_type: "guide"
        }
        const { subscriber_list } = yield* client.alerts.findSubscriberList({ urlParams: query })
        expect(JSON.parse(JSON.stringify(subscriber_list.tags))).toEqual({ constructor: { all: ["c1", "c2"] }, format: ["guide"] })
        expect(JSON.parse(JSON.stringify(subscriber_list.links))).toEqual({ taxon: { any: ["t1"] } })
        expect(subscriber_list.document_type).toBe("guide")

        const missing = yield* Effect.flip(client.alerts.getSubscription({ path: { id: "x" } }))
        expect(missing).toBeInstanceOf(SubscriptionNotFound)
      }).pipe(Effect.provide(NodeHttpClient.layerUndici))
    ))

  it.live("one body answers 201 when created and 200 when found; 202 and 204 as declared", () =>
    run((url) =>
      Effect.promise(async () => {
        const post = (title: string) =>
          fetch(`${url}/subscriber-lists`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ title, tags: { format: ["guide"] } })
          })
        const created = await post("New")
        expect(created.status).toBe(201)
        expect(created.headers.get("content-type")).toBe("application/json; charset=utf-8")
        const createdBody = await created.json() as Record<string, unknown>
        expect(createdBody).not.toHaveProperty("outcome")
        const found = await post("Old")
        expect(found.status).toBe(200)
        await found.arrayBuffer()

        const change = await fetch(`${url}/content-changes`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ title: "T" })
        })
        expect(change.status).toBe(202)
        expect(await change.json()).toEqual({ message: "Notification queued for sending" })

        const unsubscribed = await fetch(`${url}/unsubscribe/5c3e9f5e-0000-4000-8000-000000000000`, { method: "POST" })
        expect(unsubscribed.status).toBe(204)
        expect(await unsubscribed.text()).toBe("")
      })
    ))
})
