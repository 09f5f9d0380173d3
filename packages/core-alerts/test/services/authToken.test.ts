import { describe, expect, it } from "@effect/vitest"
import { isSitePath } from "../../src/api/requests"
import { authTokenLink } from "../../src/services/authToken"

describe("the auth-token link", () => {
  it("is the site's base and the destination, the destination's query kept and token added to it", () => {
    expect(authTokenLink("https://site.example", "/manage", "T")).toBe("https://site.example/manage?token=T")
    expect(authTokenLink("https://site.example/", "/manage?a=1&b=x%20y", "T")).toBe("https://site.example/manage?a=1&b=x%20y&token=T")
    expect(authTokenLink("https://site.example/base", "/manage?", "T")).toBe("https://site.example/base/manage?token=T")
    // a stored path from before the check cannot leave the site or end the Markdown link
    expect(authTokenLink("https://site.example", "@evil.example/x)[a](b", "T")).toBe("https://site.example/@evil.example/x%29%5Ba%5D%28b?token=T")
  })

  it("goes only to paths on the site", () => {
    for (const path of ["/", "/manage", "/a/b?c=//d", "/email/manage?x=https://y"]) expect(isSitePath(path), path).toBe(true)
    for (const path of ["", "manage", "//evil.example", "/\\evil.example", "https://evil.example", "/a\nb", " /a", "/a b",
      "/x)[Confirm](https://evil.example/collect", "/a//b", "@evil.example/login", "/a@b", "/a#b", "/a<b>", "/%zz"]) {
      expect(isSitePath(path), JSON.stringify(path)).toBe(false)
    }
  })
})
