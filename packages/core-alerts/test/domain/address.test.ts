import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { addressKey, normaliseAddress } from "../../src/domain/address"

const accepted = (input: string) => Either.getOrThrow(normaliseAddress(input))
const refused = (input: string) => Either.isLeft(normaliseAddress(input))

describe("normaliseAddress", () => {
  it("trims, lowercases the domain and keeps the local part's case", () => {
    expect(accepted("  Ada.Lovelace+alerts@Example.GOV.uk ")).toBe("Ada.Lovelace+alerts@example.gov.uk")
  })

  it("encodes an internationalised domain as ASCII", () => {
    expect(accepted("ada@Bücher.example")).toBe("ada@xn--bcher-kva.example")
  })

  it("refuses what is not an address", () => {
    for (
      const input of [
        "",
        "ada",
        "@example.com",
        "ada@",
        "ada@example",
        "ada@@example.com",
        "a da@example.com",
        "ada@exa mple.com",
        "ada.@example.com",
        ".ada@example.com",
        "ada..lovelace@example.com",
        "ada@-example.com",
        "ada@example.com/path",
        "ada@127.0.0.1",
        "ada@[127.0.0.1]",
        "ädä@example.com",
        "ada\u0000@example.com",
        "ada@example.com\nBcc: eve@example.com",
        `${"a".repeat(65)}@example.com`,
        `ada@${"a".repeat(250)}.com`
      ]
    ) {
      expect({ input, refused: refused(input) }).toEqual({ input, refused: true })
    }
  })

  it("says why", () => {
    expect(Either.flip(normaliseAddress("nope"))).toEqual(Either.right(expect.objectContaining({
      _tag: "InvalidAddress",
      address: "nope",
      problem: "must be an email address"
    })))
  })
})

describe("addressKey", () => {
  it("is the same for addresses that differ only in case", () => {
    expect(addressKey(accepted("ADA@EXAMPLE.COM"))).toBe(addressKey(accepted("ada@example.com")))
    expect(addressKey(accepted("ada@example.com"))).not.toBe(addressKey(accepted("ada2@example.com")))
  })
})
