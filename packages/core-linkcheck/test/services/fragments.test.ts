import { it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import type { Link } from "../../src/domain/reports"
import { LinkChecker } from "../../src/services/LinkChecker"
import { layerMemory } from "../../src/storage/memory"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { completedBatch, linkcheckWithoutWorkers, runningLinkcheck } from "../fixtures/service"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet?.close())

const checkNow = (uri: string, checkFragments?: boolean) =>
  Effect.flatMap(LinkChecker, (linkChecker) =>
    linkChecker.check({ uri, synchronous: true, checkedWithin: 0, ...(checkFragments === undefined ? {} : { checkFragments }) }))

const expectMissingSection = (link: Link, section: string) => {
  expect(link.status).toBe("caution")
  expect(link.warnings).toHaveLength(1)
  expect(link.warnings[0]).toContain(`#${section}`)
  expect(link.problemSummary).toBe("Missing section")
  expect(link.suggestedFix).not.toBeNull()
}

const expectOk = (link: Link) => expect([link.status, link.warnings, link.problemSummary]).toEqual(["ok", [], null])

describe("links into a section of a page", () => {
  it.live("a fragment is found among the ids and <a name>s, raw or percent-decoded; a missing one is caution", () =>
    Effect.gen(function*() {
      const page = `${fleet.http}/sections?rules`
      for (const found of ["intro", "caf%C3%A9", "café", "%7E", "legacy", "", "top", "TOP"]) {
        const link = yield* checkNow(`${page}#${found}`)
        expectOk(link)
        expect(link.uri).toBe(`${page}#${found}`)
      }
      expectOk(yield* checkNow(page))
      const missing = yield* checkNow(`${page}#paragraph`)
      expectMissingSection(missing, "paragraph")
      expect(missing.uri).toBe(`${page}#paragraph`)
      expectMissingSection(yield* checkNow(`${page}#Intro`), "Intro")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory()))))

  it.live("a page that is not HTML, and a broken page, get no fragment warning", () =>
    Effect.gen(function*() {
      expectOk(yield* checkNow(`${fleet.http}/sections?type=text#nowhere`))
      const broken = yield* checkNow(`${fleet.http}/status/404?fragment#nowhere`)
      expect(broken.status).toBe("broken")
      expect(broken.warnings).toEqual([])
      expect(broken.problemSummary).toBe("Page not found")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory()))))

  it.live("with fragments turned off, a missing section is fine unless the request asks for fragments", () =>
    Effect.gen(function*() {
      expectOk(yield* checkNow(`${fleet.http}/sections?off#nowhere`))
      expectMissingSection(yield* checkNow(`${fleet.http}/sections?off#nowhere`, true), "nowhere")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory(), { checkFragments: false }))))

  it.live("a request can turn fragments off where the setting has them on", () =>
    Effect.gen(function*() {
      expectOk(yield* checkNow(`${fleet.http}/sections?request-off#nowhere`, false))
      expectMissingSection(yield* checkNow(`${fleet.http}/sections?request-off#nowhere`), "nowhere")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory()))))

  it.live("a batch fetches each page once, whatever fragments its links carry, and reports each link as given", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const pages = Array.from({ length: 5 }, (_, n) => `http://site${n}.test:${fleet.httpPort}/sections?batch=${n}`)
      const uris = pages.flatMap((page) => [`${page}#intro`, `${page}#gone`, page, `${page}#legacy`, `${page}#`, `${page}#gone`])
      const created = yield* linkChecker.createBatch({ uris })
      const report = yield* completedBatch(created.batch.id)
      for (let n = 0; n < pages.length; n++) expect(fleet.requestCount(`/sections?batch=${n}`)).toBe(1)
      expect(report.links.map((link) => link.uri)).toEqual(uris)
      expect(report.links.map((link) => link.status)).toEqual(
        pages.flatMap(() => ["ok", "caution", "ok", "ok", "ok", "caution"])
      )
      expect(report.totals).toMatchObject({ links: 30, ok: 20, caution: 10, broken: 0 })
      expectMissingSection(report.links[1]!, "gone")

      // within the window, other sections of the same pages are judged from the same fetch
      const again = yield* linkChecker.createBatch({ uris: pages.map((page) => `${page}#caf%C3%A9`), checkedWithin: "1 hour" })
      expect(again.completedAtOnce).toBe(true)
      expect(again.batch.links.every((link) => link.status === "ok")).toBe(true)
      const single = yield* linkChecker.check({ uri: `${pages[0]}#elsewhere` })
      expectMissingSection(single, "elsewhere")
      for (let n = 0; n < pages.length; n++) expect(fleet.requestCount(`/sections?batch=${n}`)).toBe(1)
    }).pipe(Effect.provide(runningLinkcheck(fleet, layerMemory()))), { timeout: 30_000 })

  it.live("a batch with fragments turned off reports the links as given and judges no section", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const page = `${fleet.http}/sections?batch-off`
      const created = yield* linkChecker.createBatch({ uris: [`${page}#gone`, `${page}#intro`], checkFragments: false })
      const report = yield* completedBatch(created.batch.id)
      expect(report.links.map((link) => [link.uri, link.status])).toEqual([[`${page}#gone`, "ok"], [`${page}#intro`, "ok"]])
      expect(fleet.requestCount("/sections?batch-off")).toBe(1)
    }).pipe(Effect.provide(runningLinkcheck(fleet, layerMemory()))), { timeout: 30_000 })
})
