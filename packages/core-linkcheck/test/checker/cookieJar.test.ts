import { describe, expect, it } from "@effect/vitest"
import { cookieHeaderFor, emptyCookieJar, storeCookies } from "../../src/services/checker/cookieJar"

const at = (url: string) => new URL(url)

describe("cookie jar of one redirect chain", () => {
  it("sends a cookie back to the host that set it", () => {
    const jar = storeCookies(emptyCookieJar, ["session=abc; Path=/; HttpOnly"], at("https://example.org/login"))
    expect(cookieHeaderFor(jar, at("https://example.org/next"))).toBe("session=abc")
    expect(cookieHeaderFor(jar, at("https://www.example.org/next"))).toBeUndefined()
    expect(cookieHeaderFor(jar, at("https://other.example/next"))).toBeUndefined()
  })

  it("sends a Domain cookie to that domain and its subdomains", () => {
    const jar = storeCookies(emptyCookieJar, ["id=1; Domain=.example.org"], at("https://www.example.org/"))
    expect(cookieHeaderFor(jar, at("https://example.org/"))).toBe("id=1")
    expect(cookieHeaderFor(jar, at("https://shop.example.org/"))).toBe("id=1")
    expect(cookieHeaderFor(jar, at("https://notexample.org/"))).toBeUndefined()
  })

  it("refuses a cookie for a domain the host does not belong to", () => {
    const jar = storeCookies(emptyCookieJar, ["id=1; Domain=other.example"], at("https://www.example.org/"))
    expect(jar).toEqual([])
  })

  it("honours Path", () => {
    const jar = storeCookies(emptyCookieJar, ["a=1; Path=/docs"], at("https://example.org/docs/x"))
    expect(cookieHeaderFor(jar, at("https://example.org/docs"))).toBe("a=1")
    expect(cookieHeaderFor(jar, at("https://example.org/docs/page"))).toBe("a=1")
    expect(cookieHeaderFor(jar, at("https://example.org/docsearch"))).toBeUndefined()
    expect(cookieHeaderFor(jar, at("https://example.org/"))).toBeUndefined()
  })

  it("replaces a cookie of the same name and deletes one with Max-Age=0", () => {
    const url = at("https://example.org/")
    const first = storeCookies(emptyCookieJar, ["a=1", "b=2"], url)
    expect(cookieHeaderFor(first, url)).toBe("a=1; b=2")
    const replaced = storeCookies(first, ["a=3"], url)
    expect(cookieHeaderFor(replaced, url)).toBe("b=2; a=3")
    const deleted = storeCookies(replaced, ["b=; Max-Age=0"], url)
    expect(cookieHeaderFor(deleted, url)).toBe("a=3")
  })

  it("ignores malformed Set-Cookie values", () => {
    expect(storeCookies(emptyCookieJar, ["", "novalue", "=x"], at("https://example.org/"))).toEqual([])
  })
})
