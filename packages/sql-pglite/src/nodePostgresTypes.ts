import type { PGlite, SerializerOptions } from "@electric-sql/pglite"
import { types as nodePostgresTypes } from "pg"

/**
 * Makes `pglite` return values as node-postgres (and so `@effect/sql-pg`)
 * does: every built-in type gets node-postgres's text parser, so int8 and
 * numeric stay strings, bytea becomes a Buffer, and so on.
 */
export const useNodePostgresParsers = async (pglite: PGlite): Promise<void> => {
  const { rows } = await pglite.query<{ readonly oid: number }>("SELECT oid::int4 AS oid FROM pg_catalog.pg_type")
  for (const { oid } of rows) {
    pglite.parsers[oid] = nodePostgresTypes.getTypeParser(oid, "text")
  }
}

const asText = (value: string): string => value

/**
 * Serializers for the parameters of one query that pass them on untouched:
 * `encodeParameter` has already turned them into PostgreSQL text.
 */
export const textSerializers = (pglite: PGlite): SerializerOptions =>
  Object.fromEntries(Object.keys(pglite.serializers).map((type) => [type, asText]))
