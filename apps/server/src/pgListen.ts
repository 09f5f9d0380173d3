import { SqlError } from "@effect/sql/SqlError"
import { Effect, Redacted, Stream } from "effect"
import pg from "pg"

/**
 * LISTEN on a connection of its own for each stream, which fails as soon as that connection breaks, so that its
 * listener can tell and listen again. (`PgClient.listen` shares one connection that, once broken, stays silent.)
 */
export const pgListen = (url: Redacted.Redacted<string>) => (channel: string): Stream.Stream<string, SqlError> =>
  Stream.asyncPush<string, SqlError>((emit) =>
    Effect.gen(function*() {
      const client = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const client = new pg.Client({
              connectionString: Redacted.value(url),
              application_name: "civicstack listen",
              connectionTimeoutMillis: 5000,
              keepAlive: true
            })
            client.on("error", () => {})
            await client.connect()
            return client
          },
          catch: (cause) => new SqlError({ cause, message: "Failed to connect to listen" })
        }),
        // a release runs uninterruptibly: the end of a connection that hangs is given up on after a second
        (client) => Effect.promise(() => client.end().catch(() => undefined)).pipe(Effect.interruptible, Effect.timeoutOption(1000))
      )
      const broken = (cause: unknown) => emit.fail(new SqlError({ cause, message: "The listening connection broke" }))
      client.on("error", broken)
      client.on("end", () => broken("closed"))
      client.on("notification", (message) => {
        if (message.channel === channel && message.payload) emit.single(message.payload)
      })
      yield* Effect.tryPromise({
        try: () => client.query(`LISTEN ${client.escapeIdentifier(channel)}`),
        catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
      })
    })
  )
