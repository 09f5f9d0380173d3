/**
 * Statement parameters are turned into Postgres text values by the rules
 * node-postgres applies (and so `@effect/sql-pg`), so a statement binds the
 * same values on PGlite as on PostgreSQL: objects become JSON, arrays become
 * array literals, dates become local timestamps with their UTC offset.
 */
export const encodeParameter = (value: unknown): string | null => {
  if (value === null || value === undefined) return null
  if (ArrayBuffer.isView(value)) return `\\x${toHex(value)}`
  if (value instanceof Date) return formatTimestamp(value)
  if (Array.isArray(value)) return formatArray(value)
  if (typeof value === "object") return JSON.stringify(value)
  return String(value)
}

const toHex = (bytes: ArrayBufferView): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")

const formatArray = (items: ReadonlyArray<unknown>): string => {
  const elements = items.map((item) => {
    if (item === null || item === undefined) return "NULL"
    if (Array.isArray(item)) return formatArray(item)
    if (ArrayBuffer.isView(item)) return `\\\\x${toHex(item)}`
    return quoteArrayElement(encodeParameter(item) ?? "")
  })
  return `{${elements.join(",")}}`
}

const quoteArrayElement = (text: string): string => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`

const pad = (value: number, width = 2): string => String(value).padStart(width, "0")

const formatTimestamp = (date: Date): string => {
  const year = date.getFullYear()
  const beforeCommonEra = year < 1
  const offsetMinutes = -date.getTimezoneOffset()
  const absoluteOffset = Math.abs(offsetMinutes)
  const day = `${pad(beforeCommonEra ? 1 - year : year, 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${
    pad(date.getMilliseconds(), 3)
  }`
  const offset = `${offsetMinutes < 0 ? "-" : "+"}${pad(Math.floor(absoluteOffset / 60))}:${pad(absoluteOffset % 60)}`
  return `${day}T${time}${offset}${beforeCommonEra ? " BC" : ""}`
}
