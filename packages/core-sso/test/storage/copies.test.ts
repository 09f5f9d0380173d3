import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Option, Schedule } from "effect"
import { testPool } from "@civicstack/kit/testing"
import { SsoStore } from "../../src/storage/SsoStore"
import { layerSql } from "../../src/storage/sql"
import { createTestDatabase } from "./backends"
import { anApplication, aUser } from "./suite"

const serverUrl = process.env["TEST_DATABASE_URL"]

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000)

/** Asks `read` until `accept` holds, for at most 5 s: another copy hears a change when the database tells it. */
const eventually = <A, E>(read: Effect.Effect<A, E>, accept: (value: A) => boolean) =>
  read.pipe(
    Effect.filterOrFail(accept, () => "not seen within 5 s" as const),
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("5 seconds")))
  )

/** One copy of the store as a server runs it: a pool of its own, listening for the other copies' changes. */
const copy = (url: string) =>
  ManagedRuntime.make(
    Layer.unwrapEffect(Effect.map(PgClient.PgClient, ({ listen }) => layerSql({ listen }))).pipe(
      Layer.provide(testPool(url))
    )
  )

describe.skipIf(serverUrl === undefined)("two copies of the SQL store on one PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined
  let first: ReturnType<typeof copy> | undefined
  let second: ReturnType<typeof copy> | undefined
  beforeAll(async () => {
    database = await createTestDatabase(serverUrl!)
    first = copy(database.url)
    second = copy(database.url)
    await first.runPromise(Effect.flatMap(SsoStore, (store) =>
      Effect.zipRight(store.insertApplication(anApplication()), store.insertUser(aUser()))))
  })
  afterAll(async () => {
    await first?.dispose()
    await second?.dispose()
    await database?.drop()
  })

  it("a failed attempt one copy records is counted by the other, which had seen none before", async () => {
    const failures = (store: SsoStore["Type"]) => store.failedAttempts(["client:x", "address:y"], at(-600))
    const seenBySecond = () => second!.runPromise(Effect.flatMap(SsoStore, failures))
    expect(await seenBySecond()).toEqual([{ count: 0, oldest: null }, { count: 0, oldest: null }])
    // asked again, now that it knows of no failure at all
    expect(await seenBySecond()).toEqual([{ count: 0, oldest: null }, { count: 0, oldest: null }])
    await first!.runPromise(Effect.flatMap(SsoStore, (store) => store.recordFailedAttempt(["client:x"], at(0), at(-600))))
    const counted = await second!.runPromise(
      Effect.flatMap(SsoStore, (store) => eventually(failures(store), (found) => found[0]!.count === 1))
    )
    expect(counted).toEqual([{ count: 1, oldest: at(0) }, { count: 0, oldest: null }])
    // and the copy that recorded it counts it at once
    expect(await first!.runPromise(Effect.flatMap(SsoStore, failures))).toEqual(counted)
  })

  it("a change one copy makes to an application is seen by the other, which had it in memory", async () => {
    const clientSeen = (store: SsoStore["Type"]) =>
      Effect.map(store.applicationByClientIdHash("client-id-hash-1"), Option.map((found) => found.retired))
    expect(await second!.runPromise(Effect.flatMap(SsoStore, clientSeen))).toEqual(Option.some(false))
    await first!.runPromise(Effect.flatMap(SsoStore, (store) => store.updateApplication(anApplication({ retired: true }))))
    expect(await second!.runPromise(Effect.flatMap(SsoStore, (store) =>
      eventually(clientSeen(store), (found) => Option.getOrUndefined(found) === true)))).toEqual(Option.some(true))
  })
})
