import { randomUUID } from "node:crypto"
import type { AlertsFixtures } from "./alertsFixtures"
import type { RouteLoad, SoakRequest } from "./routeLoad"

const jsonPost = (token: string, path: string, body: unknown): SoakRequest => ({
  method: "POST",
  path,
  headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
  body: JSON.stringify(body)
})

/** `GET /subscriber-lists` by tags and `GET /subscriber-lists/{slug}` in turn, over the lookup lists. */
export const listLookups = (token: string, fixtures: AlertsFixtures, connections: number): RouteLoad<void> => {
  let sent = 0
  const headers = { authorization: `Bearer ${token}` }
  return {
    route: "lists",
    connections,
    next: () => {
      const list = fixtures.lookupLists[Math.floor(sent / 2) % fixtures.lookupLists.length]!
      const bySlug = sent % 2 === 1
      sent += 1
      const path = bySlug
        ? `/subscriber-lists/${encodeURIComponent(list.slug)}`
        : `/subscriber-lists?${new URLSearchParams([["tags[topics][]", list.topic]])}`
      return { request: { method: "GET", path, headers }, tag: undefined }
    }
  }
}

/** `POST /subscriptions` of a new address each time (201), to the lookup lists in turn. */
export const newSubscriptions = (token: string, fixtures: AlertsFixtures, run: string, connections: number): RouteLoad<void> => {
  let sent = 0
  return {
    route: "subscriptions",
    connections,
    next: () => {
      const list = fixtures.lookupLists[sent % fixtures.lookupLists.length]!
      sent += 1
      const address = `soak-${run}-${sent}@bench.example`
      return { request: jsonPost(token, "/subscriptions", { address, subscribable_id: list.id }), tag: undefined }
    }
  }
}

/**
 * `POST /notifications` (202) at `rate` a second, each matching one notified list in turn, with a content id, base path
 * and publication time of its own, so that none is refused as a content change already received.
 */
export const notifications = (token: string, fixtures: AlertsFixtures, connections: number, rate: number): RouteLoad<void> => {
  let sent = 0
  return {
    route: "notifications",
    connections,
    rate,
    next: () => {
      const topic = fixtures.notifiedTopics[sent % fixtures.notifiedTopics.length]!
      sent += 1
      return {
        request: jsonPost(token, "/notifications", {
          subject: `Soak: change ${sent}`,
          body: "A page this list follows has changed. ".repeat(8).trim(),
          tags: { topics: [topic] },
          content_id: randomUUID(),
          base_path: `/soak/change-${sent}`,
          public_updated_at: new Date().toISOString()
        }),
        tag: undefined
      }
    }
  }
}
