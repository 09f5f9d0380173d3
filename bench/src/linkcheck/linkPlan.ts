import { Chunk, Effect, Random } from "effect"

/**
 * The fleet's loopback hosts, by index (Linux routes all of 127/8 to lo):
 * - 0 .. SMALL_FLEET_HOSTS - 1: 127.0.0.2 .. 127.0.0.51, the hosts of the one-batch plan (runs 1 and 2);
 * - SMALL_FLEET_HOSTS .. : 127.0.1.1 .. 127.0.1.250, 127.0.2.1 .. 127.0.2.250, the hosts of the growth plan (run 3).
 */
export const SMALL_FLEET_HOSTS = 50
/** The most hosts the growth plan may have (127.0.1.1 .. 127.0.2.250). */
export const MAX_GROWTH_HOSTS = 500
const GROWTH_HOSTS_PER_BLOCK = 250

/** The same seed in the measuring process and in the fleet's process, so both derive the same links. */
const FLEET_SEED = 20_250_602
/** The growth plan's own seed, so that it does not depend on the one-batch plan's size. */
const GROWTH_SEED = 20_261_125

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
  /** Distinct among the links of one host. */
  readonly id: number
  /** Index of the fleet host serving this link (see `hostAddress`). */
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

export const hostAddress = (host: number) => {
  if (host < SMALL_FLEET_HOSTS) return `127.0.0.${host + 2}`
  const growthHost = host - SMALL_FLEET_HOSTS
  return `127.0.${1 + Math.floor(growthHost / GROWTH_HOSTS_PER_BLOCK)}.${1 + (growthHost % GROWTH_HOSTS_PER_BLOCK)}`
}
export const linkPath = (id: number) => `/p/${id}`
/** Where a redirect link's 301 points. */
export const redirectTargetPath = (id: number) => `/p/${id}/moved`
export const linkUri = (link: PlannedLink, port: number) => `http://${hostAddress(link.host)}:${port}${linkPath(link.id)}`

const between = (min: number, max: number) => Random.nextIntBetween(min, max + 1)
const fastLatency = between(20, 200)

const planLink = (id: number, host: number, kind: LinkKind): Effect.Effect<PlannedLink> =>
  Effect.gen(function*() {
    const hopLatenciesMs = kind === "redirect"
      ? [yield* fastLatency, yield* fastLatency]
      : [kind === "slow" ? yield* between(1000, 3000) : yield* fastLatency]
    const bodyBytes = kind === "notFound" ? 0 : yield* between(2 * 1024, 32 * 1024)
    return { id, host, kind, hopLatenciesMs, bodyBytes }
  })

const kindsOf = (count: number): ReadonlyArray<LinkKind> => {
  const odd = Math.round(count * ODD_KIND_SHARE)
  const repeat = (kind: LinkKind, times: number) => Array.from({ length: times }, () => kind)
  return [...repeat("page", count - 3 * odd), ...repeat("redirect", odd), ...repeat("notFound", odd), ...repeat("slow", odd)]
}

/** One batch: `count` links with ids from `firstId`, spread evenly over `hosts` hosts from `firstHost`, shuffled. */
const planBatch = (count: number, firstId: number, firstHost: number, hosts: number) =>
  Effect.gen(function*() {
    const kinds = yield* Random.shuffle(kindsOf(count))
    const links = yield* Effect.forEach(kinds, (kind, index) => planLink(firstId + index, firstHost + ((firstId + index) % hosts), kind))
    return Chunk.toReadonlyArray(yield* Random.shuffle(links))
  })

/**
 * `count` distinct links spread evenly over the one-batch plan's hosts, with a seeded mix of kinds and latencies, in
 * the (seeded, shuffled) order in which they are submitted. The same `count` always gives the same plan.
 */
export const makeLinkPlan = (count: number): Effect.Effect<ReadonlyArray<PlannedLink>> =>
  planBatch(count, 0, 0, SMALL_FLEET_HOSTS).pipe(Effect.withRandom(Random.make(FLEET_SEED)))

export interface GrowthPlanSize {
  readonly batches: number
  readonly linksPerBatch: number
  readonly hosts: number
}

/**
 * The growth run's batches: `batches` batches of `linksPerBatch` links each, all distinct, each batch spread evenly
 * over the growth hosts (127.0.1.1 ..) with the same mix of kinds as the one-batch plan, each in its own shuffled
 * order. The same size always gives the same plan.
 */
export const makeGrowthPlan = (size: GrowthPlanSize): Effect.Effect<ReadonlyArray<ReadonlyArray<PlannedLink>>> =>
  Effect.forEach(
    Array.from({ length: size.batches }, (_, batch) => batch),
    (batch) => planBatch(size.linksPerBatch, batch * size.linksPerBatch, SMALL_FLEET_HOSTS, size.hosts)
  ).pipe(Effect.withRandom(Random.make(GROWTH_SEED)))

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

/** The sum of the links' planned latencies. */
export const plannedLatencyMs = (links: ReadonlyArray<PlannedLink>) =>
  links.reduce((sum, link) => sum + linkDurationMs(link), 0)

export const countOfKind = (links: ReadonlyArray<PlannedLink>, kind: LinkKind) =>
  links.filter((link) => link.kind === kind).length

/** Requests of every link's chain together: one per link, and one more per redirect for its target. */
export const hopCount = (links: ReadonlyArray<PlannedLink>) => links.length + countOfKind(links, "redirect")

/** A binary min-heap of numbers paired with a value, for the simulations below. */
class MinHeap<A> {
  private readonly keys: Array<number> = []
  private readonly values: Array<A> = []
  get size() {
    return this.keys.length
  }
  peekKey(): number | undefined {
    return this.keys[0]
  }
  push(key: number, value: A) {
    const { keys, values } = this
    let index = keys.length
    keys.push(key)
    values.push(value)
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (keys[parent]! <= key) break
      keys[index] = keys[parent]!
      values[index] = values[parent]!
      index = parent
    }
    keys[index] = key
    values[index] = value
  }
  pop(): A | undefined {
    const { keys, values } = this
    if (keys.length === 0) return undefined
    const top = values[0]
    const lastKey = keys.pop()!
    const lastValue = values.pop()!
    if (keys.length > 0) {
      let index = 0
      for (;;) {
        const left = 2 * index + 1
        if (left >= keys.length) break
        const right = left + 1
        const child = right < keys.length && keys[right]! < keys[left]! ? right : left
        if (keys[child]! >= lastKey) break
        keys[index] = keys[child]!
        values[index] = values[child]!
        index = child
      }
      keys[index] = lastKey
      values[index] = lastValue
    }
    return top
  }
}

/**
 * The wall time of an ideal scheduler that knows nothing of the latencies ahead: it starts links in the order given,
 * skipping a link only while its host is at the per-host limit, the moment a slot frees, with no overhead. Slow
 * links started late make a tail that the lower bound does not count.
 *
 * For several batches posted at once, pass them concatenated in the order the server takes them: its rule is high
 * priority first, then the order in which the checks were created (one batch's links in its order, then the next
 * batch's), with no share between batches; every batch of the bench has the same priority.
 */
export const inOrderIdealMs = (links: ReadonlyArray<PlannedLink>, limits: Limits): number => {
  /** Per host, the positions of its links not started yet, in order. */
  const waitingByHost = new Map<number, Array<number>>()
  links.forEach((link, position) => {
    const waiting = waitingByHost.get(link.host)
    if (waiting === undefined) waitingByHost.set(link.host, [position])
    else waiting.push(position)
  })
  const nextOfHost = new Map<number, number>()
  const runningByHost = new Map<number, number>()
  /** The first waiting link of each host below its limit, by position. */
  const startable = new MinHeap<number>()
  const offer = (host: number) => {
    const waiting = waitingByHost.get(host)!
    const next = nextOfHost.get(host) ?? 0
    if (next < waiting.length && (runningByHost.get(host) ?? 0) < limits.perHost) startable.push(waiting[next]!, host)
  }
  for (const host of waitingByHost.keys()) offer(host)
  /** Running links' hosts by finish time. */
  const running = new MinHeap<number>()
  let now = 0
  while (startable.size > 0 || running.size > 0) {
    while (running.size < limits.global && startable.size > 0) {
      const host = startable.pop()!
      const position = waitingByHost.get(host)![nextOfHost.get(host) ?? 0]!
      nextOfHost.set(host, (nextOfHost.get(host) ?? 0) + 1)
      runningByHost.set(host, (runningByHost.get(host) ?? 0) + 1)
      running.push(now + linkDurationMs(links[position]!), host)
      offer(host)
    }
    now = running.peekKey()!
    while (running.size > 0 && running.peekKey() === now) {
      const host = running.pop()!
      const wasFull = (runningByHost.get(host) ?? 0) >= limits.perHost
      runningByHost.set(host, runningByHost.get(host)! - 1)
      if (wasFull) offer(host)
    }
  }
  return now
}
