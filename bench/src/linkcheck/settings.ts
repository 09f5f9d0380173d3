import { Config, type Option, Schema } from "effect"
import { type GrowthPlanSize, type Limits, MAX_GROWTH_HOSTS } from "./linkPlan"

/** The most links one batch may hold (the service's limit). */
const MAX_LINKS = 5000

export interface LinkcheckBenchSettings {
  /** Links of the one batch of runs 1 and 2. */
  readonly links: number
  /** The growth run's batches, links per batch and hosts. */
  readonly growth: GrowthPlanSize
  /** Limits of run 2's civicstack rows instead of linkinator's peaks, when given. */
  readonly equalLimits: Option.Option<Limits>
  /** Server on which each PostgreSQL run creates a database of its own. */
  readonly databaseUrl: string
}

const count = (name: string, fallback: number, min: number, max: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({
      message: `${name} must be a whole number from ${min} to ${max}`,
      validation: (value) => value >= min && value <= max
    })
  )

export const loadSettings: Config.Config<LinkcheckBenchSettings> = Config.all({
  links: count("BENCH_LINKS", MAX_LINKS, 1, MAX_LINKS),
  growth: Config.all({
    batches: count("BENCH_GROWTH_BATCHES", 20, 1, 100),
    linksPerBatch: count("BENCH_GROWTH_LINKS", MAX_LINKS, 1, MAX_LINKS),
    hosts: count("BENCH_GROWTH_HOSTS", MAX_GROWTH_HOSTS, 1, MAX_GROWTH_HOSTS)
  }),
  equalLimits: Config.option(
    Config.string("BENCH_EQUAL_LIMITS").pipe(
      Config.mapAttempt((text): Limits => {
        const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text)
        const [global, perHost] = [Number(match?.[1]), Number(match?.[2])]
        if (!(global >= 1 && perHost >= 1)) {
          throw new Error("BENCH_EQUAL_LIMITS must be <global>/<per host>, two whole numbers of at least 1")
        }
        return { global, perHost }
      })
    )
  ),
  databaseUrl: Config.string("BENCH_DATABASE_URL").pipe(
    Config.withDefault("postgres://postgres@127.0.0.1:5432/postgres")
  )
})

/** What `--only` can select. */
export const Subject = Schema.Literal("pg", "pglite", "linkinator")
export type Subject = typeof Subject.Type

/** What `--runs` can select. */
export const RunNumber = Schema.Literal("1", "2", "3")

/** What `--rounds` can be: how many times runs 1 and 2 run each system. */
export const Rounds = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 9))

/** The reference server's polite defaults: runs 1 and 3. */
export const defaultLimits: Limits = { global: 128, perHost: 4 }

/** linkinator's options in run 2 (its concurrency option is not kept: the fleet counts what it does instead). */
export const linkinatorOptions = { concurrency: 256, timeoutMs: 30_000 }

/** Issue 12's targets, as issue 33 revised them; in runs 1 and 2 they are judged on the medians over the rounds. */
export const targets = {
  /** Run 1: wall time over the in-order ideal, at most. */
  politeIdealRatio: 1.1,
  /** Run 1: from the POST to the fleet's first request, at most. */
  toFirstRequestMs: 150,
  /** Run 1: from the fleet's last response to the webhook, at most. */
  lastResponseToWebhookMs: 100,
  /** Run 2: our wall time over linkinator's, below this on PostgreSQL and at most this on PGlite. */
  linkinatorRatioPostgres: 1,
  linkinatorRatioPglite: 1.05,
  /** Run 2: the server's CPU per link (the database's excluded) over linkinator's, at most. */
  cpuRatio: 1,
  /** Run 2 on PostgreSQL: the server's and the database's CPU per link together over linkinator's, at most. */
  serverDatabaseCpuRatioPostgres: 1,
  /** Run 3: links per second of the in-order ideal over ours (= our wall time over its), at most. */
  growthIdealRatio: 1.15,
  /** Run 3: peak RSS of the growth run over that of one batch of the same plan, at most. */
  growthRssRatio: 1.2,
  /** Every run: the server's peak RSS below this, on each backend. */
  peakRssBytes: { PostgreSQL: 300 * 1024 * 1024, PGlite: 330 * 1024 * 1024 }
}
