import { now } from "@civicstack/kit"
import { runWorker } from "@civicstack/jobs"
import type { JobInfo, WorkerOptions } from "@civicstack/jobs"
import { Duration, Effect, Metric, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { SIGNIN, USER_UPDATE_PERMISSION } from "../domain/permissions"
import type { PermissionsByApplication } from "../domain/pushes"
import { pushUrl, updateBody } from "../domain/pushes"
import { apiTokenRecord } from "../domain/records"
import type { Application } from "../domain/records"
import { newSecret } from "../domain/secrets"
import { pushDeliveryJob } from "../domain/jobs"
import { pushAttempts } from "../domain/metrics"
import { SsoParts } from "../services/SsoParts"

/** The built-in API user whose token every push carries. */
export const PUSH_USER_EMAIL = "push@civicstack.local"

/** Push tokens live a year and are replaced when they have less than four weeks left. */
const PUSH_TOKEN_LIFETIME = Duration.days(365)
const PUSH_TOKEN_RENEWAL = Duration.weeks(4)

const pushOutcome = (
  outcome: { readonly _tag: "Answered"; readonly status: number } | { readonly _tag: "Failed"; readonly permanent: boolean }
) =>
  outcome._tag === "Failed"
    ? outcome.permanent ? "failed" : "retrying"
    : outcome.status < 300 ? "delivered" : receiverMayAcceptLater(outcome.status) ? "retrying" : "refused"

/** A later change that arrives while a push is being sent is sent too, up to this many times in one job. */
const MAX_SENDS_PER_JOB = 3

export class PushNotDelivered extends Schema.TaggedError<PushNotDelivered>()("PushNotDelivered", {
  reason: Schema.String
}) {}

const receiverMayAcceptLater = (status: number) => status === 429 || status >= 500

/** The push user's live token for an application, issuing and keeping a new one when needed (one copy at a time). */
const pushToken = (application: Application) =>
  Effect.gen(function*() {
    const { store } = yield* SsoParts
    const fresh = (at: Date) => (credential: { readonly expiresAt: Date }) =>
      credential.expiresAt.getTime() - at.getTime() > Duration.toMillis(PUSH_TOKEN_RENEWAL)
    const kept = yield* store.pushCredential(application.id)
    if (Option.exists(kept, fresh(yield* now))) return Option.getOrThrow(kept).token
    return yield* store.exclusively(Effect.gen(function*() {
      const at = yield* now
      const current = yield* store.pushCredential(application.id)
      if (Option.exists(current, fresh(at))) return Option.getOrThrow(current).token
      const pushUser = Option.getOrNull(yield* store.userByEmail(PUSH_USER_EMAIL)) ?? (yield* Effect.gen(function*() {
        const user = {
          uid: randomUUID(),
          name: "Sign-on pushes",
          email: PUSH_USER_EMAIL,
          passwordHash: null,
          isApiUser: true,
          organisationSlug: null,
          organisationContentId: null,
          suspendedAt: null,
          suspensionReason: null,
          failedSignIns: 0,
          lockedUntil: null,
          createdAt: at
        }
        yield* Effect.orDie(store.insertUser(user))
        return user
      }))
      yield* store.setPermissions(pushUser.uid, application.id, [SIGNIN, USER_UPDATE_PERMISSION])
      const token = newSecret()
      const tokenId = randomUUID()
      const expiresAt = new Date(at.getTime() + Duration.toMillis(PUSH_TOKEN_LIFETIME))
      yield* store.insertAccessToken(
        apiTokenRecord({ id: tokenId, secret: token, applicationId: application.id, userUid: pushUser.uid, createdAt: at, expiresAt })
      )
      yield* store.savePushCredential({ applicationId: application.id, tokenId, token, expiresAt })
      if (Option.isSome(current)) yield* store.revokeTokens({ accessTokenId: current.value.tokenId }, at)
      return token
    }))
  })

/** The body an update push would carry now, or `None` when there is nothing to push (the user is gone). */
const currentUpdateBody = (application: Application, userUid: string) =>
  Effect.gen(function*() {
    const { store } = yield* SsoParts
    const user = yield* store.userByUid(userUid)
    if (Option.isNone(user)) return Option.none<string>()
    const permissions: Record<string, ReadonlyArray<string>> = {}
    for (const held of yield* store.permissionsOf(userUid)) {
      const holder = yield* store.applicationById(held.applicationId)
      if (Option.isSome(holder)) permissions[holder.value.name] = held.permissions
    }
    return Option.some(JSON.stringify(updateBody(application, user.value, permissions as PermissionsByApplication)))
  })

/**
 * Sends one push and records the attempt in the event log; fails (so the queue retries it later) when the receiver
 * may take it later. An update is sent again when the user changed while it was on its way.
 */
export const deliverPush = (payload: typeof pushDeliveryJob.payload.Type, job: JobInfo) =>
  Effect.gen(function*() {
    const { pushTransport, store } = yield* SsoParts
    const application = yield* store.applicationById(payload.applicationId)
    if (Option.isNone(application) || !application.value.pushUpdates || application.value.retired) return
    const target = application.value
    const url = pushUrl(target, payload.userUid, payload.kind)
    let sentBody: string | undefined
    for (let send = 1; send <= MAX_SENDS_PER_JOB; send++) {
      const body = payload.kind === "reauth" ? Option.some("{}") : yield* currentUpdateBody(target, payload.userUid)
      if (Option.isNone(body) || body.value === sentBody) return
      const outcome = yield* pushTransport.send({
        method: payload.kind === "reauth" ? "POST" : "PUT",
        url,
        body: body.value,
        bearerToken: yield* pushToken(target)
      })
      const delivered = outcome._tag === "Answered" && outcome.status < 300
      yield* Metric.increment(Metric.tagged(pushAttempts, "outcome", pushOutcome(outcome)))
      yield* store.appendEvent({
        at: yield* now,
        kind: "push",
        userUid: payload.userUid,
        applicationId: target.id,
        detail: {
          push: payload.kind,
          url,
          attempt: job.attempt,
          ...(outcome._tag === "Answered" ? { status: outcome.status } : { error: outcome.reason }),
          outcome: delivered ? "delivered" : "failed"
        }
      })
      if (outcome._tag === "Failed") {
        if (outcome.permanent) return yield* Effect.logWarning("Push cannot be delivered; not retried").pipe(Effect.annotateLogs({ url, reason: outcome.reason }))
        return yield* new PushNotDelivered({ reason: outcome.reason })
      }
      if (receiverMayAcceptLater(outcome.status)) return yield* new PushNotDelivered({ reason: `the receiver answered ${outcome.status}` })
      if (!delivered) {
        return yield* Effect.logWarning("Push refused by its receiver; not retried").pipe(
          Effect.annotateLogs({ url, status: outcome.status })
        )
      }
      if (payload.kind === "reauth") return
      sentBody = body.value
    }
  })

export const runPushWorker = (options?: WorkerOptions) => runWorker(pushDeliveryJob, deliverPush, options)
