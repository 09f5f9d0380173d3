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

/** The acting administrator's role does not allow the change; nothing was changed. */
export class NotAllowed extends Schema.TaggedError<NotAllowed>()("NotAllowed", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  what: Schema.Literal("user", "application", "token")
}) {
  override get message() {
    return `No such ${this.what}`
  }
}

/** An emailed link that cannot be used: it was used (or a later password ended it), it expired, or it is no link of ours. */
export class EmailLinkRefused extends Schema.TaggedError<EmailLinkRefused>()("EmailLinkRefused", {
  reason: Schema.Literal("used", "expired", "unknown")
}) {
  override get message() {
    return this.reason === "used"
      ? "This link has already been used"
      : this.reason === "expired"
      ? "This link has expired"
      : "This link is not one of ours"
  }
}
