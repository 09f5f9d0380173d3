/**
 * Text as Markdown shows it as written: a line break becomes a space (so the text cannot start a line of its own,
 * where a URL would become a link), and brackets, angle brackets and backslashes are escaped (so it cannot open a
 * link or an autolink). Both email stores escape the same way (see `storage/sql/emails.ts`).
 */
export const escapeLinkText = (text: string) =>
  text.replace(/[\r\n\u2028\u2029]/g, " ").replace(/[\\[\]<>]/g, (character) => `\\${character}`)

/** One subscription's unsubscribe line in an immediate email; the SQL adapter builds the same text. */
export const unsubscribeLine = (listTitle: string, url: string) => `[Unsubscribe from ${escapeLinkText(listTitle)}](${url})`

/** Between unsubscribe lines. */
export const UNSUBSCRIBE_SEPARATOR = "\n\n"
