import { describe, expect, it } from "@effect/vitest"
import { isSitePath } from "../../src/api/requests"
import { authTokenEmail, authTokenLink, subscriptionConfirmationEmail } from "../../src/services/authToken"
import { defaultAlertsSettings } from "../../src/settings"

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

describe("the confirmation emails", () => {
  const { authToken, subscriptionConfirmation } = defaultAlertsSettings.wording

  it("say what the settings say: the subject, which is also the link's text, and the lead", () => {
    const welsh = { subject: "Cadarnhewch eich cyfeiriad e-bost", lead: "Rhywun a ofynnodd i reoli'r e-byst." }
    const email = authTokenEmail("ann@example.org", "https://site.example/manage?token=T", welsh)
    expect(email.subject).toBe(welsh.subject)
    expect(email.body.split("\n")).toEqual([
      welsh.lead,
      "",
      "[Cadarnhewch eich cyfeiriad e-bost](https://site.example/manage?token=T)",
      "",
      "The link works for 7 days.",
      "",
      "If you did not ask for this, you can ignore this email."
    ])
    expect(authTokenEmail("ann@example.org", "L", authToken).subject).toBe("Confirm your email address")
  })

  it("a subscription's fills in the list's title, as text, and how often it sends", () => {
    const email = subscriptionConfirmationEmail("ann@example.org", "Tax [{frequency}](x)", "daily", "https://l", subscriptionConfirmation)
    expect(email.subject).toBe("Confirm that you want to get emails")
    expect(email.body).toContain(
      "Someone asked for emails about \"Tax \\[{frequency}\\](x)\" to be sent to this address, once a day, when there are updates."
    )
    expect(email.body).toContain("[Confirm that you want to get emails](https://l)")
    expect(email.body).toContain("Nothing is sent until you confirm.")
  })
})
