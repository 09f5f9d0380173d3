import { describe, expect, it } from "vitest"
import { chainCookies } from "../../../src/services/inspector/cookieJar"

const at = (url: string) => new URL(url)

const jarWith = (setCookies: ReadonlyArray<string>, from: string) => {
  const cookies = chainCookies()
  cookies.store(setCookies, at(from))
  return cookies
}

describe("the cookies of one redirect chain", () => {
  it("sends a cookie back to the host that set it, not to others", () => {
    const cookies = jarWith(["session=abc; Path=/; HttpOnly"], "https://example.org/login")
    expect(cookies.headerFor(at("https://example.org/next"))).toBe("session=abc")
    expect(cookies.headerFor(at("https://www.example.org/next"))).toBeUndefined()
    expect(cookies.headerFor(at("https://other.example/next"))).toBeUndefined()
  })

  it("sends a domain cookie to the domain and its subdomains; a cookie for another domain is ignored", () => {
    const cookies = jarWith(["id=1; Domain=.example.org", "stray=1; Domain=other.example"], "https://www.example.org/")
    expect(cookies.headerFor(at("https://example.org/"))).toBe("id=1")
    expect(cookies.headerFor(at("https://shop.example.org/"))).toBe("id=1")
    expect(cookies.headerFor(at("https://notexample.org/"))).toBeUndefined()
    expect(cookies.headerFor(at("https://other.example/"))).toBeUndefined()
  })

  it("refuses a public suffix as a cookie's domain", () => {
    const cookies = jarWith(["tracker=1; Domain=co.uk"], "https://shop.example.co.uk/")
    expect(cookies.headerFor(at("https://shop.example.co.uk/"))).toBeUndefined()
    expect(cookies.headerFor(at("https://another-site.co.uk/"))).toBeUndefined()
  })

  it("sends a Secure cookie over https only", () => {
    const cookies = jarWith(["token=s; Secure", "plain=p"], "https://example.org/")
    expect(cookies.headerFor(at("https://example.org/"))).toBe("token=s; plain=p")
    expect(cookies.headerFor(at("http://example.org/"))).toBe("plain=p")
  })

  it("deletes a cookie set again with an Expires in the past, or Max-Age=0", () => {
    const url = at("https://example.org/")
    const cookies = jarWith(["a=1", "b=2"], url.href)
    cookies.store(["a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "b=; Max-Age=0"], url)
    expect(cookies.headerFor(url)).toBeUndefined()
  })

  it("takes the default path from the URL that set the cookie, and honours an explicit path", () => {
    const cookies = jarWith(["scoped=1"], "https://example.org/docs/page")
    cookies.store(["a=1; Path=/guides"], at("https://example.org/"))
    expect(cookies.headerFor(at("https://example.org/docs/other"))).toBe("scoped=1")
    expect(cookies.headerFor(at("https://example.org/"))).toBeUndefined()
    expect(cookies.headerFor(at("https://example.org/guides/x"))).toBe("a=1")
    expect(cookies.headerFor(at("https://example.org/guidesearch"))).toBeUndefined()
  })

  it("replaces a cookie of the same name and ignores malformed values", () => {
    const url = at("https://example.org/")
    const cookies = jarWith(["a=1", "b=2"], url.href)
    cookies.store(["a=3", "", "=x"], url)
    expect(cookies.headerFor(url)).toBe("a=3; b=2")
  })
})
