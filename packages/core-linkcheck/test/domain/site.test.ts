import { describe, expect, it } from "@effect/vitest"
import { siteOf } from "../../src/domain/site"

describe("siteOf", () => {
  it("subdomains, ports, schemes and letter case of one registrable domain are one site", () => {
    const uris = [
      "https://example.org/",
      "http://example.org:8080/a",
      "https://www.example.org/b?c=d",
      "https://a.b.c.Example.ORG:8443/",
      "http://example.org./trailing-dot"
    ]
    expect(new Set(uris.map(siteOf))).toEqual(new Set(["example.org"]))
  })

  it("follows the public suffix list: one site per registrable domain under a multi-label suffix", () => {
    expect(siteOf("https://www.example.co.uk/")).toBe("example.co.uk")
    expect(siteOf("https://shop.example.co.uk:8443/")).toBe("example.co.uk")
    expect(siteOf("https://other.co.uk/")).toBe("other.co.uk")
    expect(siteOf("https://www.gov.uk/")).toBe("www.gov.uk")
    expect(siteOf("https://assets.publishing.service.gov.uk/x")).toBe("service.gov.uk")
  })

  it("different registrable domains are different sites", () => {
    expect(siteOf("https://example.org/")).not.toBe(siteOf("https://example.com/"))
    expect(siteOf("https://example.org/")).not.toBe(siteOf("https://example.org.evil.com/"))
    expect(siteOf("https://a.test:3000/")).not.toBe(siteOf("https://b.test:3000/"))
  })

  it("an IP address is its own site, whatever the port", () => {
    expect(siteOf("http://127.0.0.1:40123/ok")).toBe("127.0.0.1")
    expect(siteOf("https://127.0.0.1:40124/ok")).toBe("127.0.0.1")
    expect(siteOf("http://127.0.0.2:40123/ok")).toBe("127.0.0.2")
    expect(siteOf("http://[::1]:8080/")).toBe("[::1]")
    expect(siteOf("http://[2001:db8::1]/")).not.toBe(siteOf("http://[2001:db8::2]/"))
  })

  it("a name with no registrable domain is its own site, without the port", () => {
    expect(siteOf("http://localhost:3000/")).toBe("localhost")
    expect(siteOf("http://LOCALHOST:4000/")).toBe("localhost")
    expect(siteOf("http://intranet/page")).toBe("intranet")
  })

  it("links that make no request share the empty key", () => {
    expect(siteOf("mailto:someone@example.org")).toBe("")
    expect(siteOf("ftp://example.org/file")).toBe("")
    expect(siteOf("not a url")).toBe("")
  })
})
