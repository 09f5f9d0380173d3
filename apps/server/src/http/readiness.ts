import { Context, Effect, Layer, Ref } from "effect"

/** A service's figures on the readiness page: what waits, what is being worked on, how old the oldest work is. */
export type ReadinessFigures = Readonly<Record<string, number | null>>

/** Where each slot registers its readiness figures, so the health check shows every service's backlog. */
export class ReadinessSections extends Context.Tag("@civicstack/server/ReadinessSections")<ReadinessSections, {
  readonly add: (service: string, figures: Effect.Effect<ReadinessFigures, unknown>) => Effect.Effect<void>
  readonly read: Effect.Effect<Record<string, ReadinessFigures>, unknown>
}>() {
  static readonly layer = Layer.effect(
    ReadinessSections,
    Effect.map(Ref.make<ReadonlyArray<readonly [string, Effect.Effect<ReadinessFigures, unknown>]>>([]), (sections) => ({
      add: (service, figures) => Ref.update(sections, (all) => [...all, [service, figures] as const]),
      read: Effect.flatMap(Ref.get(sections), (all) =>
        Effect.map(
          Effect.forEach(all, ([service, figures]) => Effect.map(figures, (read) => [service, read] as const)),
          (read) => Object.fromEntries(read)
        ))
    }))
  )
}
