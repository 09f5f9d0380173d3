import { Marked } from "marked"
import type { Token, Tokens } from "marked"

/** One email ready for a provider that sends parts: a plain text part and a complete HTML document. */
export interface RenderedEmail {
  readonly text: string
  readonly html: string
}

export interface EmailToRender {
  readonly subject: string
  /** Markdown, as the publishing apps wrote it. */
  readonly body: string
  /** The document's language; English unless said. */
  readonly lang?: string
}

const htmlEscapes: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\"": "&quot;",
  "'": "&#39;"
}

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (character) => htmlEscapes[character]!)

/** Like `escapeHtml`, but an entity the author wrote (`&amp;`, `&#8212;`) stays one instead of showing as code. */
const escapeMarkdownText = (value: string): string =>
  value.replace(/&(?!#x[0-9a-f]{1,6};|#[0-9]{1,7};|[a-z][a-z0-9]{1,31};)|[<>"']/gi, (character) => htmlEscapes[character]!)

/** Only these links become links: a `javascript:` or `data:` URL in a body shows as its text and nothing more. */
const isSafeHref = (href: string): boolean => /^(https?:\/\/|mailto:)/i.test(href.trim())

const namedEntities: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " }

/** Markdown lets authors write entities (`&amp;`); the text part shows the characters they stand for. */
const decodeEntities = (value: string): string =>
  value.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+);/gi, (entity, name: string) => {
    if (name.startsWith("#")) {
      const codePoint = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
      return codePoint > 0 && codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity
    }
    return namedEntities[name.toLowerCase()] ?? entity
  })

// Raw HTML in a body is shown as text: bodies come from publishing apps, and an email must not carry their markup.
const markdown = new Marked({ async: false, gfm: true }).use({
  renderer: {
    html: ({ text, block }) => (block ? `<p>${escapeMarkdownText(text.trim())}</p>\n` : escapeMarkdownText(text)),
    // marked leaves text inside a raw HTML block unescaped; here every piece of text is escaped
    text(token) {
      return "tokens" in token && token.tokens !== undefined
        ? this.parser.parseInline(token.tokens)
        : escapeMarkdownText(token.text)
    },
    code: ({ text }) => `<pre><code>${escapeHtml(text.replace(/\n$/, ""))}</code></pre>\n`,
    link({ href, title, tokens }) {
      const label = this.parser.parseInline(tokens)
      if (!isSafeHref(href)) return label
      const titleAttribute = title ? ` title="${escapeHtml(title)}"` : ""
      return `<a href="${escapeHtml(href)}"${titleAttribute}>${label}</a>`
    },
    // email clients often block images: the alternative text, linked to the image, always reads
    image: ({ href, text }) =>
      isSafeHref(href) ? `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>` : escapeHtml(text)
  }
})

const documentStyle =
  "body{font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:1.5;color:#0b0c0c;max-width:640px;margin:0 auto;padding:16px}" +
  "a{color:#1d70b8}pre{white-space:pre-wrap}"

const htmlDocument = (email: EmailToRender, bodyHtml: string): string =>
  [
    "<!DOCTYPE html>",
    `<html lang="${escapeHtml(email.lang ?? "en")}">`,
    "<head>",
    "<meta charset=\"utf-8\">",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
    `<title>${escapeHtml(email.subject)}</title>`,
    `<style>${documentStyle}</style>`,
    "</head>",
    "<body>",
    bodyHtml.trimEnd(),
    "</body>",
    "</html>",
    ""
  ].join("\n")

const linkAsText = (label: string, href: string): string => {
  if (!isSafeHref(href)) return label
  const shown = href.replace(/^mailto:/i, "")
  return label === "" || label === href || label === shown ? shown : `${label} (${href})`
}

const inlineText = (tokens: ReadonlyArray<Token>): string => tokens.map(inlineTokenText).join("")

const inlineTokenText = (token: Token): string => {
  switch (token.type) {
    case "link":
      return linkAsText(inlineText((token as Tokens.Link).tokens), (token as Tokens.Link).href)
    case "image": {
      const { href, text } = token as Tokens.Image
      return linkAsText(decodeEntities(text), href)
    }
    case "br":
      return "\n"
    case "checkbox":
      return ""
    case "html":
    case "codespan":
    case "escape":
      return (token as Tokens.HTML | Tokens.Codespan | Tokens.Escape).text
    case "text":
      return "tokens" in token && token.tokens !== undefined
        ? inlineText(token.tokens)
        : decodeEntities((token as Tokens.Text).text)
    default:
      return "tokens" in token && token.tokens !== undefined
        ? inlineText(token.tokens)
        : "text" in token && typeof token.text === "string"
        ? decodeEntities(token.text)
        : ""
  }
}

const indentFollowingLines = (value: string, indent: string): string => value.split("\n").join(`\n${indent}`)

const headingText = ({ depth, tokens }: Tokens.Heading): string => {
  const title = inlineText(tokens)
  const width = Math.max(...title.split("\n").map((line) => line.length))
  if (depth === 1) return `${title}\n${"=".repeat(width)}`
  if (depth === 2) return `${title}\n${"-".repeat(width)}`
  return title
}

const listText = (list: Tokens.List): string => {
  const start = typeof list.start === "number" ? list.start : 1
  return list.items
    .map((item, index) => {
      const marker = list.ordered ? `${start + index}. ` : "- "
      const task = item.task ? (item.checked ? "[x] " : "[ ] ") : ""
      const content = blocksText(item.tokens, item.loose ? "\n\n" : "\n")
      return marker + task + indentFollowingLines(content, " ".repeat(marker.length))
    })
    .join(list.loose ? "\n\n" : "\n")
}

const tableText = (table: Tokens.Table): string =>
  [table.header, ...table.rows].map((row) => row.map((cell) => inlineText(cell.tokens)).join(" | ")).join("\n")

const blockText = (token: Token): string => {
  switch (token.type) {
    case "heading":
      return headingText(token as Tokens.Heading)
    case "paragraph":
      return inlineText((token as Tokens.Paragraph).tokens)
    case "list":
      return listText(token as Tokens.List)
    case "blockquote":
      return blocksText((token as Tokens.Blockquote).tokens, "\n\n")
        .split("\n")
        .map((line) => (line === "" ? ">" : `> ${line}`))
        .join("\n")
    case "code":
      return (token as Tokens.Code).text.split("\n").map((line) => `    ${line}`).join("\n")
    case "hr":
      return "-".repeat(20)
    case "table":
      return tableText(token as Tokens.Table)
    case "html":
      return (token as Tokens.HTML).text.trim()
    case "space":
    case "def":
      return ""
    default:
      return inlineTokenText(token)
  }
}

const blocksText = (tokens: ReadonlyArray<Token>, separator: string): string =>
  tokens.map(blockText).filter((text) => text.trim() !== "").join(separator)

/**
 * The two parts of an email from its Markdown body: HTML (raw HTML in the body escaped, only http(s) and mailto
 * links kept) in a small complete document titled with the subject, and plain text with links as `text (url)`.
 */
export const renderEmail = (email: EmailToRender): RenderedEmail => {
  const tokens = markdown.lexer(email.body)
  const text = blocksText(tokens, "\n\n").replace(/[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n").trim()
  const bodyHtml = markdown.parser(tokens)
  return { text: `${text}\n`, html: htmlDocument(email, bodyHtml) }
}
