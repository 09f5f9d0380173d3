import { Schema } from "effect"

/** The column types the sso tables share, and how their values are passed as parameters. */
export const Names = Schema.Array(Schema.String)
export const Timestamp = Schema.DateFromSelf
export const OptionalTimestamp = Schema.NullOr(Schema.DateFromSelf)

export const timestamp = (date: Date | null) => (date === null ? null : date.toISOString())
export const json = (value: unknown) => JSON.stringify(value)

/** PostgreSQL text cannot hold NUL: a value with one can match no stored row. */
export const storable = (text: string) => !text.includes("\u0000")

/**
 * The joined rows of `tokenHolder` and `exchangeRefreshToken` name each table's columns with its own prefix, so that the
 * row schemas decode them.
 */
export const joinedPart = (alias: string, part: string, row: { readonly fields: object }) => {
  const columns = Object.keys(row.fields).filter((column) => column !== "first_use")
  const names = columns.map((column) => `${part}__${column}`)
  return {
    /** The select list of this table's columns, each under its prefixed name. */
    select: columns.map((column, index) => `${alias}.${column} AS ${names[index]}`).join(", "),
    /** The prefixed names, for a select from a query that already selected them. */
    names: names.join(", "),
    /** This table's row out of a joined row. */
    take: (joined: Record<string, unknown>) => {
      const taken: Record<string, unknown> = {}
      for (let index = 0; index < columns.length; index++) taken[columns[index]!] = joined[names[index]!]
      return taken
    }
  }
}
