import { Schema } from "effect"

export class BenchError extends Schema.TaggedError<BenchError>()("BenchError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export const failWith = (message: string) => (cause: unknown) => new BenchError({ message, cause })
