import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { errorAnswer, json } from "@civicstack/kit/access"
import { Schema } from "effect"


const Names = Schema.Array(Schema.String)
const Timestamp = Schema.String.annotations({ description: "ISO 8601 instant" })

export const AdminApplication = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  home_uri: Schema.String,
  redirect_uris: Names,
  permissions: Names,
  push_updates: Schema.Boolean,
  push_format: Schema.Literal("seed", "gds-sso"),
  require_pkce: Schema.Boolean,
  require_2sv: Schema.Boolean,
  retired: Schema.Boolean,
  created_at: Timestamp
})
export type AdminApplication = typeof AdminApplication.Type

/** The answer to creating an application: its credentials, shown this once. */
export const CreatedApplicationResponse = Schema.Struct({
  application: Schema.Struct({ ...AdminApplication.fields, client_id: Schema.String, client_secret: Schema.String })
})

export const AdminUser = Schema.Struct({
  uid: Schema.String,
  name: Schema.String,
  email: Schema.String,
  api_user: Schema.Boolean,
  organisation_slug: Schema.NullOr(Schema.String),
  organisation_content_id: Schema.NullOr(Schema.String),
  permissions: Schema.Record({ key: Schema.String, value: Names }),
  suspended_at: Schema.NullOr(Timestamp),
  suspension_reason: Schema.NullOr(Schema.String),
  locked_until: Schema.NullOr(Timestamp),
  failed_sign_ins: Schema.Number,
  created_at: Timestamp
})
export type AdminUser = typeof AdminUser.Type

export const UserResponse = Schema.Struct({ user: AdminUser })

export const AdminEvent = Schema.Struct({
  at: Timestamp,
  kind: Schema.String,
  user: Schema.NullOr(Schema.String),
  application: Schema.NullOr(Schema.String),
  detail: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

const Text = (maxLength: number) => Schema.String.pipe(Schema.maxLength(maxLength))

export const CreateApplicationBody = Schema.Struct({
  name: Text(100),
  description: Schema.optional(Text(1000)),
  home_uri: Text(2000),
  redirect_uris: Schema.Array(Text(2000)).pipe(Schema.maxItems(20)),
  permissions: Schema.optional(Schema.Array(Text(100)).pipe(Schema.maxItems(100))),
  push_updates: Schema.optional(Schema.Boolean),
  push_format: Schema.optional(Schema.Literal("seed", "gds-sso")),
  require_pkce: Schema.optional(Schema.Boolean),
  require_2sv: Schema.optional(Schema.Boolean)
})

export const CreateUserBody = Schema.Struct({
  email: Text(254),
  name: Text(200),
  password: Schema.optional(Text(128)),
  admin: Schema.optional(Schema.Boolean),
  api_user: Schema.optional(Schema.Boolean),
  organisation_slug: Schema.optional(Schema.NullOr(Text(200)))
})

export const UpdateUserBody = Schema.Struct({
  name: Schema.optional(Text(200)),
  email: Schema.optional(Text(254))
})

export const SetPermissionsBody = Schema.Struct({
  application: Text(100),
  permissions: Schema.Array(Text(100)).pipe(Schema.maxItems(100))
})

export const SuspendBody = Schema.Struct({ reason: Text(500) })

export const IssueTokenBody = Schema.Struct({
  application: Text(100),
  /** Seconds; 2 years when absent. */
  expires_in: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(60, 10 * 365 * 24 * 3600)))
})

export const IssuedTokenResponse = Schema.Struct({
  access_token: Schema.String,
  expires_in: Schema.Number,
  id: Schema.String
})

const EnvelopeFields = {
  error: Schema.String,
  details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}

/** Errors of the admin API: the JSON envelope with the status that tells them apart. */
export class AdminUnauthorized extends Schema.TaggedError<AdminUnauthorized>()("AdminUnauthorized", { error: Schema.String }) {}
export class AdminForbidden extends Schema.TaggedError<AdminForbidden>()("AdminForbidden", { error: Schema.String }) {}
export class AdminNotFound extends Schema.TaggedError<AdminNotFound>()("AdminNotFound", { error: Schema.String }) {}
export class AdminConflict extends Schema.TaggedError<AdminConflict>()("AdminConflict", { error: Schema.String }) {}
export class AdminInvalid extends Schema.TaggedError<AdminInvalid>()("AdminInvalid", EnvelopeFields) {}

const envelopeOf = <Self>(errorClass: Schema.Schema<Self, any>, status: number) =>
  errorAnswer(errorClass, { error: Schema.String }, status)

export const AdminInvalidResponse = errorAnswer(AdminInvalid, EnvelopeFields, 400)

const Uid = Schema.Struct({ uid: Schema.String })

/**
 * The admin JSON API, for a bearer token issued to the SSO's own application (`sso`) whose user has its `admin`
 * permission. 401 without such a token, 403 for anyone else.
 */
export class AdminGroup extends HttpApiGroup.make("admin")
  .add(HttpApiEndpoint.post("createApplication", "/admin/applications").setPayload(CreateApplicationBody).addSuccess(json(CreatedApplicationResponse), { status: 201 }))
  .add(HttpApiEndpoint.get("listApplications", "/admin/applications").addSuccess(json(Schema.Struct({ applications: Schema.Array(AdminApplication) }))))
  .add(HttpApiEndpoint.post("createUser", "/admin/users").setPayload(CreateUserBody).addSuccess(json(UserResponse), { status: 201 }))
  .add(HttpApiEndpoint.get("listUsers", "/admin/users").addSuccess(json(Schema.Struct({ users: Schema.Array(AdminUser) }))))
  .add(HttpApiEndpoint.get("getUser", "/admin/users/:uid").setPath(Uid).addSuccess(json(UserResponse)))
  .add(HttpApiEndpoint.patch("updateUser", "/admin/users/:uid").setPath(Uid).setPayload(UpdateUserBody).addSuccess(json(UserResponse)))
  .add(HttpApiEndpoint.put("setPermissions", "/admin/users/:uid/permissions").setPath(Uid).setPayload(SetPermissionsBody).addSuccess(json(UserResponse)))
  .add(HttpApiEndpoint.post("suspendUser", "/admin/users/:uid/suspend").setPath(Uid).setPayload(SuspendBody).addSuccess(json(UserResponse)))
  .add(HttpApiEndpoint.post("unsuspendUser", "/admin/users/:uid/unsuspend").setPath(Uid).addSuccess(json(UserResponse)))
  .add(HttpApiEndpoint.post("unlockUser", "/admin/users/:uid/unlock").setPath(Uid).addSuccess(json(UserResponse)))
  .add(HttpApiEndpoint.post("issueToken", "/admin/users/:uid/tokens").setPath(Uid).setPayload(IssueTokenBody).addSuccess(json(IssuedTokenResponse), { status: 201 }))
  .add(HttpApiEndpoint.del("revokeToken", "/admin/tokens/:id").setPath(Schema.Struct({ id: Schema.String })).addSuccess(HttpApiSchema.NoContent))
  .add(
    HttpApiEndpoint.get("events", "/admin/events")
      .setUrlParams(Schema.Struct({ user: Schema.optional(Schema.UUID) }))
      .addSuccess(json(Schema.Struct({ events: Schema.Array(AdminEvent) })))
  )
  .addError(envelopeOf(AdminUnauthorized, 401))
  .addError(envelopeOf(AdminForbidden, 403))
  .addError(envelopeOf(AdminNotFound, 404))
  .addError(envelopeOf(AdminConflict, 409))
  .addError(AdminInvalidResponse)
{}
