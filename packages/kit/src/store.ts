import { Schema } from "effect"

/** A store could not do what was asked: the database failed or answered rows that do not decode. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** The `StoreError` of one store's operations, e.g. `storeFailure("sso store")("findUser")(cause)`. */
export const storeFailure = (store: string) => (operation: string) => (cause: unknown) =>
  new StoreError({ message: `${store}: ${operation} failed`, cause })
