import { PgliteClient } from "@civicstack/sql-pglite"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option, Queue, Stream } from "effect"

const listeningChannels = Effect.gen(function*() {
  const sql = yield* PgliteClient.PgliteClient
  const rows = yield* sql<{ readonly channel: string }>`SELECT pg_listening_channels() AS channel`
  return rows.map((row) => row.channel)
})

const awaitListening = (channel: string) =>
  Effect.repeat(listeningChannels, { until: (channels) => channels.includes(channel) })

/** Collects the payloads of `channel` into a queue until the test ends. */
const collect = (channel: string) =>
  Effect.gen(function*() {
    const sql = yield* PgliteClient.PgliteClient
    const payloads = yield* Queue.unbounded<string>()
    yield* Effect.forkScoped(Stream.runForEach(sql.listen(channel), (payload) => Queue.offer(payloads, payload)))
    yield* awaitListening(channel)
    return payloads
  })

layer(PgliteClient.layer({}))("PgliteClient LISTEN/NOTIFY", (it) => {
  it.scoped("delivers notifications of the channel, named case-sensitively, to its listeners", () =>
    Effect.gen(function*() {
      const sql = yield* PgliteClient.PgliteClient
      const jobs = yield* collect("JobQueue")
      const other = yield* collect("other")

      yield* sql.notify("JobQueue", "first")
      yield* sql`SELECT pg_notify('JobQueue', ${"second"})`
      yield* sql.notify("jobqueue", "lower case is another channel")

      expect(yield* Queue.take(jobs)).toBe("first")
      expect(yield* Queue.take(jobs)).toBe("second")
      yield* sql.notify("other", "marker")
      expect(yield* Queue.take(other)).toBe("marker")
      expect(yield* Queue.size(jobs)).toBe(0)
    }))

  it.scoped("delivers what a transaction notifies when it commits, and nothing when it rolls back", () =>
    Effect.gen(function*() {
      const sql = yield* PgliteClient.PgliteClient
      const payloads = yield* collect("orders")

      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_notify('orders', 'committed')`
        yield* sql.notify("orders", "committed too")
        yield* Effect.yieldNow()
        expect(yield* Queue.size(payloads)).toBe(0)
      }))
      expect(yield* Queue.take(payloads)).toBe("committed")
      expect(yield* Queue.take(payloads)).toBe("committed too")

      yield* Effect.flip(sql.withTransaction(
        Effect.zipRight(sql`SELECT pg_notify('orders', 'rolled back')`, Effect.fail("undo"))
      ))
      yield* sql.notify("orders", "after the rollback")
      expect(yield* Queue.take(payloads)).toBe("after the rollback")
    }))

  it.scoped("stays subscribed while any stream listens, and unsubscribes after the last one ends", () =>
    Effect.gen(function*() {
      const sql = yield* PgliteClient.PgliteClient
      const lasting = yield* collect("shared")
      const brief = yield* Effect.fork(Stream.runCollect(Stream.take(sql.listen("shared"), 1)))
      // Notify until the brief listener, subscribed at some point, has had one and ended.
      yield* Effect.repeat(Effect.zipRight(sql.notify("shared", "one"), Fiber.poll(brief)), { until: Option.isSome })
      yield* Queue.takeAll(lasting)

      yield* sql.notify("shared", "two")
      expect(yield* Queue.take(lasting)).toBe("two")
      expect(yield* listeningChannels).toContain("shared")

      const only = yield* Effect.fork(Stream.runCollect(Stream.take(sql.listen("solo"), 1)))
      yield* awaitListening("solo")
      yield* sql.notify("solo", "only")
      yield* Fiber.join(only)
      expect(yield* listeningChannels).not.toContain("solo")
    }))

  it.scoped("like @effect/sql-pg, does not emit notifications without a payload", () =>
    Effect.gen(function*() {
      const sql = yield* PgliteClient.PgliteClient
      const payloads = yield* collect("pings")

      yield* sql.notify("pings", "")
      yield* sql.notify("pings", "with payload")

      expect(yield* Queue.take(payloads)).toBe("with payload")
    }))
})
