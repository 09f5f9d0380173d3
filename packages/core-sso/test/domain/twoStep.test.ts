import { describe, expect, it } from "vitest"
import {
  acceptedStep,
  isTotpSecret,
  newRecoveryCodes,
  newTotpSecret,
  normalisedRecoveryCode,
  totpCode,
  totpUri
} from "../../src/domain/twoStep"

// RFC 6238's SHA-1 test seed, "12345678901234567890", in base32
const RFC_SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

describe("TOTP", () => {
  it("gives RFC 6238's codes (SHA-1, the last six digits)", () => {
    expect(totpCode(RFC_SECRET, 59_000)).toBe("287082")
    expect(totpCode(RFC_SECRET, 1_111_111_109_000)).toBe("081804")
    expect(totpCode(RFC_SECRET, 2_000_000_000_000)).toBe("279037")
  })

  it("accepts the code of this step or one either side, once: a code is never taken again", () => {
    const now = 1_700_000_000_000
    const step = Math.floor(now / 30_000)
    expect(acceptedStep(RFC_SECRET, totpCode(RFC_SECRET, now), now, null)).toBe(step)
    expect(acceptedStep(RFC_SECRET, totpCode(RFC_SECRET, now - 30_000), now, null)).toBe(step - 1)
    expect(acceptedStep(RFC_SECRET, totpCode(RFC_SECRET, now + 30_000), now, null)).toBe(step + 1)
    expect(acceptedStep(RFC_SECRET, totpCode(RFC_SECRET, now - 60_000), now, null)).toBeUndefined()
    expect(acceptedStep(RFC_SECRET, totpCode(RFC_SECRET, now), now, step)).toBeUndefined()
    expect(acceptedStep(RFC_SECRET, totpCode(RFC_SECRET, now - 30_000), now, step)).toBeUndefined()
    expect(acceptedStep(RFC_SECRET, ` ${totpCode(RFC_SECRET, now).replace(/(\d{3})/, "$1 ")}`, now, null)).toBe(step)
    for (const wrong of ["", "12345", "1234567", "abcdef", "000000"]) {
      expect(acceptedStep(RFC_SECRET, wrong, now, null), wrong).toBeUndefined()
    }
  })

  it("makes new secrets of 160 bits and the otpauth URI an app scans", () => {
    const secret = newTotpSecret()
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(isTotpSecret(secret)).toBe(true)
    expect(isTotpSecret("not base32!")).toBe(false)
    expect(newTotpSecret()).not.toBe(secret)
    const uri = new URL(totpUri(secret, "ada@example.com", "civicstack"))
    expect(uri.protocol).toBe("otpauth:")
    expect(uri.searchParams.get("secret")).toBe(secret)
    expect(uri.searchParams.get("issuer")).toBe("civicstack")
    expect(decodeURIComponent(uri.pathname)).toContain("ada@example.com")
  })
})

describe("recovery codes", () => {
  it("are ten distinct codes, read back however they are typed", () => {
    const codes = newRecoveryCodes()
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    for (const code of codes) {
      expect(code).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/)
      expect(normalisedRecoveryCode(` ${code.toUpperCase().replaceAll("-", " ")} `)).toBe(code)
      expect(normalisedRecoveryCode(code.replaceAll("-", ""))).toBe(code)
    }
  })
})
