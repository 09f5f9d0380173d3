import { Config, Schema } from "effect"
import type { Limits } from "./linkPlan"

/** The most links one batch may hold (the service's limit). */
const MAX_LINKS = 5000

export interface LinkcheckBenchSettings {
  readonly links: number
  /** Server on which each PostgreSQL run creates a database of its own. */
  readonly databaseUrl: string
}

export const loadSettings: Config.Config<LinkcheckBenchSettings> = Config.all({
  links: Config.integer("BENCH_LINKS").pipe(
    Config.withDefault(MAX_LINKS),
    Config.validate({
      message: `BENCH_LINKS must be a whole number from 1 to ${MAX_LINKS}`,
      validation: (links) => links >= 1 && links <= MAX_LINKS
    })
  ),
  databaseUrl: Config.string("BENCH_DATABASE_URL").pipe(
    Config.withDefault("postgres://postgres@127.0.0.1:5432/postgres")
  )
})

/** What `--only` can select. */
export const Subject = Schema.Literal("pg", "pglite", "linkinator")
export type Subject = typeof Subject.Type

/** Run 1: the reference server's polite defaults. Run 2: higher limits, beside linkinator. */
export const runLimits: Record<1 | 2, Limits> = {
  1: { global: 128, perHost: 4 },
  2: { global: 256, perHost: 10 }
}

export const linkinatorOptions = { concurrency: runLimits[2].global, timeoutMs: 30_000 }

/** The targets. */
export const targets = {
  /** Wall time at most this many times the lower bound, in both runs. */
  lowerBoundRatio: 1.3,
  peakRssBytes: 300 * 1024 * 1024
}
