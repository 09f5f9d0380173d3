/**
 * The encoding of an HTML page, as the HTML standard's sniffing finds it, in short: a byte order mark, else the
 * `charset` of its `Content-Type`, else a `<meta>` in its first kilobyte, else UTF-8 (where a browser would guess, most
 * pages today are UTF-8). The result is a label `TextDecoder` knows.
 */
export const pageEncoding = (start: Uint8Array, contentType: string | undefined): string =>
  byteOrderMark(start) ?? known(charsetOf(contentType)) ?? fromMeta(known(metaCharset(start))) ?? "utf-8"

const byteOrderMark = (start: Uint8Array): string | undefined => {
  if (start[0] === 0xef && start[1] === 0xbb && start[2] === 0xbf) return "utf-8"
  if (start[0] === 0xfe && start[1] === 0xff) return "utf-16be"
  if (start[0] === 0xff && start[1] === 0xfe) return "utf-16le"
  return undefined
}

const charsetOf = (contentType: string | undefined): string | undefined =>
  /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType ?? "")?.[1]

/** `<meta charset=x>`, or the `charset` in the `content` of `<meta http-equiv="Content-Type">`. */
const metaCharset = (start: Uint8Array): string | undefined =>
  /<meta\s[^>]*?charset\s*=\s*["']?\s*([^"'\s;/>]+)/i.exec(Buffer.from(start).toString("latin1"))?.[1]

/** The label when `TextDecoder` knows it (the Encoding standard's labels), else undefined. */
const known = (label: string | undefined): string | undefined => {
  if (label === undefined) return undefined
  try {
    return new TextDecoder(label).encoding
  } catch {
    return undefined
  }
}

/** A page cannot be in UTF-16 and still say so in ASCII: the standard reads such a `<meta>` as UTF-8. */
const fromMeta = (encoding: string | undefined): string | undefined =>
  encoding === "utf-16le" || encoding === "utf-16be" ? "utf-8" : encoding
