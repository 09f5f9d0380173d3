/** Link text cannot hold an unescaped bracket or backslash. Both email stores escape the same way (see `storage/sql/emails.ts`). */
export const escapeLinkText = (text: string) => text.replace(/[\\[\]]/g, (character) => `\\${character}`)

/** One subscription's unsubscribe line in an immediate email; the SQL adapter builds the same text. */
export const unsubscribeLine = (listTitle: string, url: string) => `[Unsubscribe from ${escapeLinkText(listTitle)}](${url})`

/** Between unsubscribe lines. */
export const UNSUBSCRIBE_SEPARATOR = "\n\n"
