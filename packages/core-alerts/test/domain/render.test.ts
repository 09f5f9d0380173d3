import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { renderEmail } from "../../src/domain/render"

const bodyOf = (html: string): string => html.slice(html.indexOf("<body>") + 6, html.indexOf("</body>"))

/** The tags the renderer itself writes; anything else in the HTML came from a body. */
const rendererTags = new Set([
  "p", "h1", "h2", "h3", "h4", "h5", "h6", "a", "em", "strong", "del", "code", "pre", "ul", "ol", "li", "blockquote",
  "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "input"
])

const tagsIn = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)/g)].map((match) => match[1]!.toLowerCase())

describe("renderEmail: HTML", () => {
  it("is a small complete document: doctype, language, charset and the subject as its title", () => {
    const { html } = renderEmail({ subject: "Tax & VAT <updates>", body: "Hello" })
    expect(html.startsWith("<!DOCTYPE html>\n<html lang=\"en\">")).toBe(true)
    expect(html).toContain("<meta charset=\"utf-8\">")
    expect(html).toContain("<title>Tax &amp; VAT &lt;updates&gt;</title>")
    expect(html.trimEnd().endsWith("</html>")).toBe(true)
    expect(renderEmail({ subject: "Bore", body: "Helo" , lang: "cy" }).html).toContain("<html lang=\"cy\">")
  })

  it("renders headings, emphasis, links and nested lists", () => {
    const body = bodyOf(renderEmail({
      subject: "s",
      body: "# Changes\n\n## To tax\n\nRead **this** and [the guide](https://www.gov.uk/guide?a=1&b=2 \"Guide\").\n\n" +
        "- first\n- second\n  1. inner one\n  2. inner two\n"
    }).html)
    expect(body).toContain("<h1>Changes</h1>")
    expect(body).toContain("<h2>To tax</h2>")
    expect(body).toContain("<strong>this</strong>")
    expect(body).toContain("<a href=\"https://www.gov.uk/guide?a=1&amp;b=2\" title=\"Guide\">the guide</a>")
    expect(body).toMatch(/<ul>\s*<li>first<\/li>\s*<li>second<ol>\s*<li>inner one<\/li>\s*<li>inner two<\/li>\s*<\/ol>/)
  })

  it("escapes raw HTML from the body instead of passing it on", () => {
    const { html } = renderEmail({
      subject: "s",
      body: "Hi <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n<div onclick=\"steal()\">\n<script>x<y</script>\n</div>\n"
    })
    const body = bodyOf(html)
    expect(html).not.toMatch(/<script/i)
    expect(body).not.toMatch(/<img|<div/i)
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(body).toContain("&lt;div onclick=&quot;steal()&quot;&gt;")
  })

  it("keeps only http(s) and mailto links; others show as their text", () => {
    const body = bodyOf(renderEmail({
      subject: "s",
      body: "[one](javascript:alert(1)) [two](java&#115;cript:alert(1)) [three](data:text/html,x) [four](mailto:help@example.org)"
    }).html)
    expect(body).not.toMatch(/javascript|data:/i)
    expect(body).toContain("one two three <a href=\"mailto:help@example.org\">four</a>")
  })

  it("keeps entities the author wrote without escaping them twice", () => {
    expect(bodyOf(renderEmail({ subject: "s", body: "AT&amp;T &mdash; R&D" }).html)).toContain("AT&amp;T &mdash; R&amp;D")
  })

  it("never lets a tag from the body through, whatever the body", () => {
    const fragment = fc.constantFrom(
      "<script>", "</script>", "<img src=x onerror=alert(1)>", "<", ">", "\"", "'", "&", "`", "```\n", "\n", "\n\n",
      "[", "]", "(", ")", "](", "javascript:", "https://x.org/", "*", "_", "# ", "- ", "1. ", "> ", "<!--", "-->",
      "<div>", "<a href=\"javascript:x\">", "![", "&#60;", "\\", " ", "text", "<iframe", "<svg onload=x>", "| a |\n|---|\n"
    )
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 40 }), (fragments) => {
        const body = bodyOf(renderEmail({ subject: "s", body: fragments.join("") }).html)
        for (const tag of tagsIn(body)) expect(rendererTags.has(tag), `<${tag}> in ${body}`).toBe(true)
        expect(body).not.toMatch(/href="(?!https?:\/\/|mailto:)/i)
        expect(body).not.toMatch(/<[^>]*\son[a-z]+=/i)
      }),
      { numRuns: 300 }
    )
  })
})

describe("renderEmail: text", () => {
  it("is readable: underlined headings, links as text (url), lists with markers and indentation", () => {
    const { text } = renderEmail({
      subject: "s",
      body: "# Changes\n\n## To tax\n\nRead **this** and [the guide](https://www.gov.uk/guide).\n\n" +
        "- first\n- second\n  1. inner one\n  2. inner two\n\n" +
        "See <https://www.gov.uk/x> or write to [help@example.org](mailto:help@example.org).\n"
    })
    expect(text).toBe(
      "Changes\n=======\n\nTo tax\n------\n\nRead this and the guide (https://www.gov.uk/guide).\n\n" +
        "- first\n- second\n  1. inner one\n  2. inner two\n\n" +
        "See https://www.gov.uk/x or write to help@example.org.\n"
    )
  })

  it("shows characters for entities and drops unsafe link targets", () => {
    const { text } = renderEmail({ subject: "s", body: "AT&amp;T &#8212; [click](javascript:alert(1))" })
    expect(text).toBe("AT&T \u2014 click\n")
  })

  it("quotes block quotes and keeps code as written", () => {
    const { text } = renderEmail({ subject: "s", body: "> quoted **line**\n> second\n\n```\n<b>as is</b>\n```\n" })
    expect(text).toBe("> quoted line\n> second\n\n    <b>as is</b>\n")
  })
})
