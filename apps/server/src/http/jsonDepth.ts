/** Deeper JSON is refused before it is decoded: describing a mismatch in it would recurse as deep as it goes. */
export const MAX_JSON_DEPTH = 64

/** Whether `text`, read as JSON, opens more than `limit` arrays and objects inside one another. */
export const nestsDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (inString) {
      if (char === 92) index++ // backslash: the next character is escaped
      else if (char === 34) inString = false
    } else if (char === 34) {
      inString = true
    } else if (char === 91 || char === 123) {
      if (++depth > limit) return true
    } else if (char === 93 || char === 125) {
      depth--
    }
  }
  return false
}
