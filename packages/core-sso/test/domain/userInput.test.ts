import { describe, expect, it } from "vitest"
import { emailProblem, textProblem } from "../../src/domain/userInput"

describe("text people type", () => {
  const name = (value: string) => textProblem(value, { min: 1, max: 10 })

  it("accepts names in any script, emoji included", () => {
    expect([name("Ada"), name("Zoë Ōta"), name("李小龍"), name("Ada 🚀")]).toEqual([undefined, undefined, undefined, undefined])
  })

  it("refuses control characters, half a surrogate pair, blanks and overlong text", () => {
    expect(name("A\u0000")).toBe("must not contain control characters")
    expect(name("A\ud800")).toBe("must be valid Unicode text")
    expect(name("\udc00A")).toBe("must be valid Unicode text")
    expect(name("   ")).toBe("must not be blank")
    expect(name("x".repeat(11))).toBe("must be at most 10 characters")
  })

  it("email addresses: one @ with text either side, nothing a mail server would choke on", () => {
    expect(emailProblem("ada@example.com")).toBeUndefined()
    for (const bad of ["ada", "@example.com", "ada@", "a da@example.com", "\u0000@x", "ada@\ud800", `${"a".repeat(250)}@x.io`]) {
      expect({ bad, problem: emailProblem(bad) }).toEqual({ bad, problem: "must be an email address" })
    }
  })
})
