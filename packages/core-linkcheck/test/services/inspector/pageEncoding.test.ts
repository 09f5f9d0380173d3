import { describe, expect, it } from "@effect/vitest"
import { pageEncoding } from "../../../src/services/inspector/pageEncoding"

const ascii = (text: string) => Buffer.from(text, "latin1")

describe("a page's encoding", () => {
  it("is UTF-8 when a page names an encoding no decoder knows, or a hostile one", () => {
    for (const label of ["x".repeat(3000), "utf-8\u0000", "\ud800", "nonsense"]) {
      expect(pageEncoding(ascii("<html>"), `text/html; charset=${label}`), label.slice(0, 10)).toBe("utf-8")
      expect(pageEncoding(ascii(`<meta charset="${label}">`), "text/html"), label.slice(0, 10)).toBe("utf-8")
    }
  })

  it("reads a <meta> that says UTF-16 as UTF-8, and lets a byte order mark win over the header", () => {
    expect(pageEncoding(ascii(`<meta charset="utf-16le">`), "text/html")).toBe("utf-8")
    expect(pageEncoding(Uint8Array.from([0xfe, 0xff, 0, 0x3c]), "text/html; charset=windows-1252")).toBe("utf-16be")
    expect(pageEncoding(ascii("<html>"), "text/html; charset=\"ISO-8859-1\"")).toBe("windows-1252")
  })
})
