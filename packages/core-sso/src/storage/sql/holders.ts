import type { SqlClient } from "@effect/sql/SqlClient"
import { Clock, Deferred, Duration, Effect, FiberRef, Schedule, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { ReadMemory } from "./readMemory"

/** Carries a change to token holders in any copy; a payload starting `probe:` is a copy checking that it hears. */
export const HOLDERS_CHANNEL = "civicstack_sso_token_holders"
export const HOLDERS_CHANGED = "changed"
/** The payload announcing a failed attempt, followed by its time in milliseconds. */
export const FAILED_ATTEMPT = "failed:"

/** Set by a change to token holders inside a transaction, so that the cache forgets them again once it commits. */
export const holdersChangedInTransaction = FiberRef.unsafeMake(false)

/** LISTEN on the store's database (e.g. `PgClient.listen`). */
export type Listen = (channel: string) => Stream.Stream<string, unknown>

/** How often a copy checks that it hears its own notifications (while it does, and until it does), and how long an echo may take. */
const PROBE_INTERVAL = Duration.seconds(1)
const PROBE_INTERVAL_UNHEARD = Duration.millis(100)
const DEAF_AFTER = Duration.seconds(3)

/**
 * Listens for the changes of every copy while the store is open. The cache answers only while this copy hears its
 * own probes come back: from the first echo (awaited here, up to `DEAF_AFTER`) until an echo is overdue, which a
 * listening connection that died quietly would cause. Probes measure the network, so they run on the real clock.
 */
export const listenForChanges = (
  listen: Listen | undefined,
  memory: ReadMemory,
  sql: SqlClient
) =>
  Effect.gen(function*() {
    if (listen === undefined) return
    const probe = `probe:${randomUUID()}`
    const realClock = Clock.make()
    let lastEcho = 0
    const firstEcho = yield* Deferred.make<void>()
    yield* listen(HOLDERS_CHANNEL).pipe(
      Stream.runForEach((payload) =>
        Effect.suspend(() => {
          if (payload.startsWith("probe:")) {
            if (payload !== probe) return Effect.void
            return Effect.flatMap(Clock.currentTimeMillis, (now) => {
              lastEcho = now
              if (!memory.enabled) memory.setEnabled(true)
              return Deferred.succeed(firstEcho, undefined)
            })
          }
          if (payload.startsWith(FAILED_ATTEMPT)) {
            const at = Number(payload.slice(FAILED_ATTEMPT.length))
            // a payload it cannot read leaves the copy counting failures in the database
            return Effect.sync(() => Number.isFinite(at) ? memory.failures.heard(at) : memory.setEnabled(false))
          }
          return Effect.sync(memory.invalidate)
        })
      ),
      Effect.ensuring(Effect.sync(() => memory.setEnabled(false))),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Stopped listening for sign-on changes; reading token holders from the database", cause)
      ),
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.withClock(realClock),
      Effect.forkScoped
    )
    const checkHearing = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (memory.enabled && now - lastEcho > Duration.toMillis(DEAF_AFTER)) {
        memory.setEnabled(false)
        yield* Effect.logWarning("Sign-on change notifications stopped arriving; reading token holders from the database")
      }
      yield* Effect.ignore(sql`SELECT pg_notify(${HOLDERS_CHANNEL}, ${probe})`)
    })
    yield* checkHearing.pipe(
      Effect.zipRight(Effect.suspend(() => Effect.sleep(memory.enabled ? PROBE_INTERVAL : PROBE_INTERVAL_UNHEARD))),
      Effect.forever,
      Effect.withClock(realClock),
      Effect.forkScoped
    )
    yield* Deferred.await(firstEcho).pipe(Effect.timeout(DEAF_AFTER), Effect.ignore, Effect.withClock(realClock))
  })
