import type { CheckResult } from "./check"
import { describeProblem, Problem } from "./problems"

/**
 * Links into a section of a page (`https://example.org/guide#costs`): a check fetches the page once, whatever
 * fragments its links carry, and each link's fragment is looked up among the page's anchors when its report is built.
 */

/** A link as a check sees it: the page it fetches, and the fragment after the first `#` (null when there is none). */
export interface LinkTarget {
  readonly page: string
  readonly fragment: string | null
}

/** A page to check, and whether its check reads the page's anchors (some link wants a section of it judged). */
export interface WantedPage {
  readonly uri: string
  readonly readsAnchors: boolean
}

/**
 * Only http(s) URLs are split: any other text is checked as it is given. Splitting at the first `#` keeps the text
 * exactly: `page + "#" + fragment` is the link again.
 */
export const targetOf = (uri: string): LinkTarget => {
  const hash = uri.indexOf("#")
  if (hash === -1 || !/^\s*https?:/i.test(uri) || !URL.canParse(uri)) return { page: uri, fragment: null }
  return { page: uri.slice(0, hash), fragment: uri.slice(hash + 1) }
}

/** The fragment of a link whose page is `page`, as `targetOf` split it. */
export const fragmentOf = (uri: string, page: string): string | null =>
  uri.length > page.length && uri.startsWith(page) && uri[page.length] === "#" ? uri.slice(page.length + 1) : null

/** Percent-decoding, then UTF-8 decoding without BOM, as the HTML standard's "find a potential indicated element". */
const percentDecode = (text: string): string => {
  if (!text.includes("%")) return text
  const bytes = Buffer.from(text, "utf8")
  const decoded: Array<number> = []
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!
    const hex = byte === 0x25 && index + 2 < bytes.length ? bytes.toString("latin1", index + 1, index + 3) : ""
    if (/^[0-9a-f]{2}$/i.test(hex)) {
      decoded.push(parseInt(hex, 16))
      index += 2
    } else decoded.push(byte)
  }
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(Uint8Array.from(decoded))
}

/** An empty fragment and `top` take a browser to the top of the page, whatever the page holds. */
const meansTop = (fragment: string): boolean => fragment === "" || percentDecode(fragment).toLowerCase() === "top"

/** Whether a link's fragment is looked up on its page when fragments are checked. */
export const namesSection = (fragment: string | null): fragment is string => fragment !== null && !meansTop(fragment)

/** The pages of these links, each once, in the order of their first link; a page's anchors are read if any link names a section. */
export const pagesOf = (targets: ReadonlyArray<LinkTarget>, checkFragments: boolean): ReadonlyArray<WantedPage> => {
  const readsAnchors = new Map<string, boolean>()
  for (const { fragment, page } of targets) {
    const wanted = checkFragments && namesSection(fragment)
    if (wanted || !readsAnchors.has(page)) readsAnchors.set(page, wanted || (readsAnchors.get(page) ?? false))
  }
  return [...readsAnchors].map(([uri, reads]) => ({ uri, readsAnchors: reads }))
}

/** Each page once, its anchors read if any asks for them. */
export const distinctPages = (pages: ReadonlyArray<WantedPage>): ReadonlyArray<WantedPage> => {
  const readsAnchors = new Map<string, boolean>()
  for (const page of pages) readsAnchors.set(page.uri, page.readsAnchors || (readsAnchors.get(page.uri) ?? false))
  return [...readsAnchors].map(([uri, reads]) => ({ uri, readsAnchors: reads }))
}

/**
 * What a page's anchors may take: a hostile page must not make the store hold megabytes. Longer anchors are kept to
 * this length and compared so; a page with more anchors, or more text in them, is not judged at all.
 */
export const MAX_ANCHOR_LENGTH = 256
export const MAX_ANCHORS = 5_000
export const MAX_ANCHOR_CHARACTERS = 128 * 1024

/** Built once per anchors list (a batch's links of one page share the list). */
const anchorSets = new WeakMap<ReadonlyArray<string>, ReadonlySet<string>>()

const anchorSetOf = (anchors: ReadonlyArray<string>): ReadonlySet<string> => {
  let set = anchorSets.get(anchors)
  if (set === undefined) {
    set = new Set(anchors)
    anchorSets.set(anchors, set)
  }
  return set
}

/** The fragment as the URL parser leaves it (what a browser matches raw first): `#a b` becomes `a%20b`. */
const parsedForm = (fragment: string): string => {
  try {
    return new URL(`http://x/#${fragment}`).hash.slice(1)
  } catch {
    return fragment
  }
}

/** Whether a page with these anchors has the section a fragment names: raw first, then percent-decoded. */
export const hasSection = (anchors: ReadonlyArray<string>, fragment: string): boolean => {
  const set = anchorSetOf(anchors)
  const parsed = parsedForm(fragment)
  return [fragment, parsed, percentDecode(parsed)].some((form) => set.has(form.slice(0, MAX_ANCHOR_LENGTH)))
}

/** How the section is named in the warning: decoded, and cut short if it is long. */
const shownSection = (fragment: string): string => {
  const decoded = percentDecode(parsedForm(fragment))
  return decoded.length > 80 ? `${decoded.slice(0, 80)}…` : decoded
}

/**
 * A link's result from its page's: a missing section adds one warning. A page that is broken, that was not read for
 * its anchors (not HTML, not a 200, or too large to judge), or a fragment that names no section, changes nothing.
 */
export const judgeSection = (
  page: CheckResult,
  anchors: ReadonlyArray<string> | null,
  fragment: string | null
): CheckResult => {
  if (anchors === null || page.status === "broken" || !namesSection(fragment) || hasSection(anchors, fragment)) {
    return page
  }
  const missing = describeProblem(Problem.MissingSection({ section: shownSection(fragment) }), null)
  const hadProblems = page.errors.length + page.warnings.length + page.danger.length > 0
  return {
    status: "caution",
    errors: page.errors,
    warnings: page.warnings.includes(missing.message) ? page.warnings : [...page.warnings, missing.message],
    danger: page.danger,
    // the least important warning of the table: any problem the page already has stays the summary
    problemSummary: page.problemSummary ?? missing.summary,
    suggestedFix: hadProblems ? null : missing.suggestedFix
  }
}
