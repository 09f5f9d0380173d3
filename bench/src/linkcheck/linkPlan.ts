import { Chunk, Effect, Random } from "effect"

/** Loopback hosts of the fleet: 127.0.0.2 .. 127.0.0.51 (Linux routes all of 127/8 to lo). */
export const FLEET_HOSTS = 50

/** The same seed in the measuring process and in the fleet's process, so both derive the same links. */
const FLEET_SEED = 20_250_602

/** Share of the links of each kind other than `page`. */
const ODD_KIND_SHARE = 0.05

/**
 * - `page`: a 200 HTML page after 20..200 ms
 * - `redirect`: a 301 to a 200 page on the same host, each hop after its own 20..200 ms
 * - `notFound`: a 404 after 20..200 ms
 * - `slow`: a 200 HTML page after 1..3 s
 */
export type LinkKind = "page" | "redirect" | "notFound" | "slow"

export interface PlannedLink {
  readonly id: number
  /** Index of the fleet host serving this link, from 0 to `FLEET_HOSTS - 1`. */
  readonly host: number
  readonly kind: LinkKind
  /** Time to the response headers of each request the link takes: one, or two for a redirect. */
  readonly hopLatenciesMs: ReadonlyArray<number>
  /** Size of the HTML body of the 200 page the link ends on; 0 for a 404. */
  readonly bodyBytes: number
}

/** The concurrency limits a checker runs under; `perHost` is `Infinity` when there is no per-host limit. */
export interface Limits {
  readonly global: number
  readonly perHost: number
}

export const hostAddress = (host: number) => `127.0.0.${host + 2}`
export const linkPath = (id: number) => `/p/${id}`
/** Where a redirect link's 301 points. */
export const redirectTargetPath = (id: number) => `/p/${id}/moved`
export const linkUri = (link: PlannedLink, port: number) => `http://${hostAddress(link.host)}:${port}${linkPath(link.id)}`

const between = (min: number, max: number) => Random.nextIntBetween(min, max + 1)
const fastLatency = between(20, 200)

const planLink = (id: number, kind: LinkKind): Effect.Effect<PlannedLink> =>
  Effect.gen(function*() {
    const hopLatenciesMs = kind === "redirect"
      ? [yield* fastLatency, yield* fastLatency]
      : [kind === "slow" ? yield* between(1000, 3000) : yield* fastLatency]
    const bodyBytes = kind === "notFound" ? 0 : yield* between(2 * 1024, 32 * 1024)
    return { id, host: id % FLEET_HOSTS, kind, hopLatenciesMs, bodyBytes }
  })

const kindsOf = (count: number): ReadonlyArray<LinkKind> => {
  const odd = Math.round(count * ODD_KIND_SHARE)
  const repeat = (kind: LinkKind, times: number) => Array.from({ length: times }, () => kind)
  return [...repeat("page", count - 3 * odd), ...repeat("redirect", odd), ...repeat("notFound", odd), ...repeat("slow", odd)]
}

/**
 * `count` distinct links spread evenly over the fleet's hosts, with a seeded mix of kinds and latencies, in the
 * (seeded, shuffled) order in which they are submitted. The same `count` always gives the same plan.
 */
export const makeLinkPlan = (count: number): Effect.Effect<ReadonlyArray<PlannedLink>> =>
  Effect.gen(function*() {
    const kinds = yield* Random.shuffle(kindsOf(count))
    const links = yield* Effect.forEach(kinds, (kind, id) => planLink(id, kind))
    return Chunk.toReadonlyArray(yield* Random.shuffle(links))
  }).pipe(Effect.withRandom(Random.make(FLEET_SEED)))

export const linkDurationMs = (link: PlannedLink) => link.hopLatenciesMs.reduce((sum, latency) => sum + latency, 0)

/**
 * What an ideal scheduler with no overhead could do under `limits`: no faster than all the links' time spread over
 * the global limit, than the busiest host's time spread over the per-host limit, or than the longest link.
 */
export const lowerBoundMs = (links: ReadonlyArray<PlannedLink>, limits: Limits): number => {
  let total = 0
  let longest = 0
  const byHost = new Map<number, number>()
  for (const link of links) {
    const duration = linkDurationMs(link)
    total += duration
    longest = Math.max(longest, duration)
    byHost.set(link.host, (byHost.get(link.host) ?? 0) + duration)
  }
  const busiestHost = Math.max(0, ...byHost.values())
  return Math.max(total / limits.global, busiestHost / limits.perHost, longest)
}

export const countOfKind = (links: ReadonlyArray<PlannedLink>, kind: LinkKind) =>
  links.filter((link) => link.kind === kind).length

/** Requests of every link's chain together: one per link, and one more per redirect for its target. */
export const hopCount = (links: ReadonlyArray<PlannedLink>) => links.length + countOfKind(links, "redirect")

/**
 * The wall time of an ideal scheduler that knows nothing of the latencies ahead: it starts links in the order they
 * were submitted, skipping a link only while its host is at the per-host limit, the moment a slot frees, with no
 * overhead. Slow links started late make a tail that the lower bound does not count.
 */
export const inOrderIdealMs = (links: ReadonlyArray<PlannedLink>, limits: Limits): number => {
  const started = new Array<boolean>(links.length).fill(false)
  const runningByHost = new Map<number, number>()
  /** Finish times of running links, with their hosts, kept sorted by time (few hundred at most). */
  let running: Array<{ readonly at: number; readonly host: number }> = []
  let firstUnstarted = 0
  let now = 0
  let finished = 0
  while (finished < links.length) {
    for (let index = firstUnstarted; index < links.length && running.length < limits.global; index++) {
      const link = links[index]!
      if (started[index] || (runningByHost.get(link.host) ?? 0) >= limits.perHost) continue
      started[index] = true
      runningByHost.set(link.host, (runningByHost.get(link.host) ?? 0) + 1)
      const at = now + linkDurationMs(link)
      const position = running.findIndex((other) => other.at > at)
      running.splice(position === -1 ? running.length : position, 0, { at, host: link.host })
    }
    while (firstUnstarted < links.length && started[firstUnstarted]) firstUnstarted++
    const next = running[0]!
    now = next.at
    const done = running.filter((entry) => entry.at === now)
    running = running.slice(done.length)
    for (const entry of done) runningByHost.set(entry.host, runningByHost.get(entry.host)! - 1)
    finished += done.length
  }
  return now
}
