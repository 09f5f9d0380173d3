import { Schema } from "effect"

/** A value the service refuses, named by its field; nothing was changed. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  field: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `${this.field} ${this.problem}`
  }
}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  what: Schema.Literal("user", "application", "token")
}) {
  override get message() {
    return `No such ${this.what}`
  }
}
