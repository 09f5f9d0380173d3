import { describe, expect, it } from "vitest"
import { Duration } from "effect"
import { emailLinkMessage, lifetimeInWords } from "../../src/domain/emailLinks"

describe("the emails of one-time links", () => {
  it("say how long their link works in words", () => {
    expect(lifetimeInWords(Duration.days(7))).toBe("7 days")
    expect(lifetimeInWords(Duration.hours(2))).toBe("2 hours")
    expect(lifetimeInWords(Duration.hours(1))).toBe("1 hour")
    expect(lifetimeInWords(Duration.hours(36))).toBe("36 hours")
    expect(lifetimeInWords(Duration.minutes(20))).toBe("20 minutes")
  })

  it("hold the link as one Markdown link and nothing a person chose", () => {
    const url = "https://signon.example/users/password/edit?token=0123456789abcdef0123456789abcdef"
    for (const purpose of ["invitation", "password_reset"] as const) {
      const { body, subject } = emailLinkMessage(purpose, url, Duration.days(7), "signon.example")
      expect(subject).not.toBe("")
      expect(body.match(/\]\(/g)).toHaveLength(1)
      expect(body).toContain(`(${url})`)
      expect(body).toContain("signon.example")
    }
  })
})
