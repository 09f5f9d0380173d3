import { describe, expect, it } from "@effect/vitest"
import { Problem } from "../../src/domain/problems"
import {
  hasMatureRating,
  isFollowableRedirect,
  isHtml,
  isRetriedInBackground,
  problemForStatus
} from "../../src/domain/responseRules"

describe("problemForStatus", () => {
  it("maps statuses to the problems of the check table", () => {
    expect(problemForStatus(200, undefined)).toBeNull()
    expect(problemForStatus(404, undefined)).toEqual(Problem.PageNotFound({ status: 404 }))
    expect(problemForStatus(410, undefined)).toEqual(Problem.PageNotFound({ status: 410 }))
    expect(problemForStatus(401, undefined)).toEqual(Problem.RequiresLogin({ status: 401 }))
    expect(problemForStatus(403, "")).toEqual(Problem.RequiresLogin({ status: 403 }))
    expect(problemForStatus(403, "Challenge")).toEqual(Problem.BlocksRobots({ status: 403 }))
    expect(problemForStatus(401, "challenge")).toEqual(Problem.BlocksRobots({ status: 401 }))
    expect(problemForStatus(429, undefined)).toEqual(Problem.RateLimited())
    expect(problemForStatus(400, undefined)).toEqual(Problem.ClientError({ status: 400 }))
    expect(problemForStatus(451, "challenge")).toEqual(Problem.ClientError({ status: 451 }))
    expect(problemForStatus(500, undefined)).toEqual(Problem.ServerError({ status: 500 }))
    expect(problemForStatus(503, undefined)).toEqual(Problem.ServerError({ status: 503 }))
    expect(problemForStatus(599, undefined)).toEqual(Problem.ServerError({ status: 599 }))
    for (const status of [100, 201, 203, 204, 299, 300, 302, 304, 600]) {
      expect(problemForStatus(status, undefined)).toEqual(Problem.UnusualStatus({ status }))
    }
  })
})

describe("isFollowableRedirect", () => {
  it("needs a redirect status and a Location", () => {
    for (const status of [301, 302, 303, 307, 308]) expect(isFollowableRedirect(status, "/next")).toBe(true)
    expect(isFollowableRedirect(302, undefined)).toBe(false)
    expect(isFollowableRedirect(302, "  ")).toBe(false)
    expect(isFollowableRedirect(300, "/next")).toBe(false)
    expect(isFollowableRedirect(304, "/next")).toBe(false)
    expect(isFollowableRedirect(200, "/next")).toBe(false)
  })
})

describe("isRetriedInBackground", () => {
  it("is true for 429 and 503 only", () => {
    expect([429, 503, 500, 502, 504, 404].map(isRetriedInBackground)).toEqual([true, true, false, false, false, false])
  })
})

describe("isHtml", () => {
  it("recognises HTML content types", () => {
    expect(isHtml("text/html")).toBe(true)
    expect(isHtml("Text/HTML; charset=utf-8")).toBe(true)
    expect(isHtml("application/xhtml+xml")).toBe(true)
    expect(isHtml("text/plain")).toBe(false)
    expect(isHtml("text/htmlx")).toBe(false)
    expect(isHtml(undefined)).toBe(false)
  })
})

describe("hasMatureRating", () => {
  it("finds the mature ratings in either attribute order and any quoting", () => {
    expect(hasMatureRating(`<head><meta name="rating" content="adult"></head>`)).toBe(true)
    expect(hasMatureRating(`<meta content='mature' name='rating' />`)).toBe(true)
    expect(hasMatureRating(`<META NAME=RATING CONTENT=RESTRICTED>`)).toBe(true)
    expect(hasMatureRating(`<meta name="rating" content="RTA-5042-1996-1400-1577-RTA">`)).toBe(true)
    expect(hasMatureRating(`<meta\n  name="rating"\n  content="general, adult">`)).toBe(true)
  })

  it("ignores other ratings and other meta tags", () => {
    expect(hasMatureRating(`<meta name="rating" content="general">`)).toBe(false)
    expect(hasMatureRating(`<meta name="description" content="adult education">`)).toBe(false)
    expect(hasMatureRating(`<meta name="rating-notes" content="adult">`)).toBe(false)
    expect(hasMatureRating(`<p>rating adult</p>`)).toBe(false)
    expect(hasMatureRating("")).toBe(false)
  })
})
