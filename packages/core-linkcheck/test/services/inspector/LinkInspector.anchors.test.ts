import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LinkInspector } from "../../../src/services/LinkInspector"
import { startFixtureFleet } from "../../fixtures/fleet"
import type { FixtureFleet } from "../../fixtures/fleet"
import { testConfig } from "./support"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet.close())

const inspect = (uri: string, readsAnchors: boolean) =>
  Effect.flatMap(LinkInspector, (inspector) => inspector.inspect(uri, { background: false, readsAnchors })).pipe(
    Effect.provide(LinkInspector.layer(testConfig(fleet)))
  )

describe("LinkInspector: anchors of a page", () => {
  it.live("an HTML page asked for its anchors gives its ids and <a name>s, up to </body>", () =>
    Effect.gen(function*() {
      const { anchors, result } = yield* inspect(`${fleet.http}/sections?anchors`, true)
      expect(result.status).toBe("ok")
      expect(anchors).toEqual(["intro", "café", "%7E", "top-news", "legacy"])
      expect(fleet.requestCount("/sections?anchors")).toBe(1)
    }))

  it.live("a page's ids are read in its encoding: a byte order mark, else the header's charset, else its <meta>", () =>
    Effect.gen(function*() {
      for (const declare of ["header", "meta", "http-equiv", "bom", "none"]) {
        const { anchors } = yield* inspect(`${fleet.http}/sections-encoded?declare=${declare}`, true)
        expect(anchors, declare).toEqual(["café", "naïve"])
      }
    }))

  it.live("anchors far beyond the head's window are read too", () =>
    Effect.gen(function*() {
      const { anchors } = yield* inspect(`${fleet.http}/sections?padding=300000`, true)
      expect(anchors).toContain("legacy")
    }))

  it.live("a page not asked for its anchors, a page that is not HTML and a 404 give none", () =>
    Effect.gen(function*() {
      expect((yield* inspect(`${fleet.http}/sections?not-asked`, false)).anchors).toBeNull()
      expect((yield* inspect(`${fleet.http}/sections?type=text`, true)).anchors).toBeNull()
      expect((yield* inspect(`${fleet.http}/status/404?anchors`, true)).anchors).toBeNull()
    }))

  it.live("the anchors of the page a redirect leads to are read", () =>
    Effect.gen(function*() {
      const { anchors, result } = yield* inspect(`${fleet.http}/redirect/to?location=/sections%3Fredirected`, true)
      expect(result.status).toBe("ok")
      expect(anchors).toContain("legacy")
    }))

  it.live("a redirect to a section of its own gives no anchors: a browser goes to that section, not the link's", () =>
    Effect.gen(function*() {
      for (const location of ["/sections%3Fown-section%23legacy", "/sections%3Fown-empty%23"]) {
        const { anchors, result } = yield* inspect(`${fleet.http}/redirect/to?location=${location}`, true)
        expect(result.status, location).toBe("ok")
        expect(anchors, location).toBeNull()
      }
    }))

  it.live("a page larger than the size limit is read no further and gives no anchors", () =>
    Effect.gen(function*() {
      const { anchors, result } = yield* inspect(`${fleet.http}/huge?anchors`, true)
      expect(result.status).toBe("ok")
      expect(anchors).toBeNull()
      // the 1 MiB limit, plus what was in flight when the connection was cut
      expect(fleet.bytesSent("/huge?anchors")).toBeLessThan(8 * 1024 * 1024)
    }))
})
