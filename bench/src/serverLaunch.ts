import { type AddressInfo, createServer } from "node:net"

/**
 * How every bench starts the reference server: the way the repository's README tells ops to run it in production,
 * `MALLOC_ARENA_MAX=2 node --max-old-space-size=256 apps/server/dist/cli.js serve`, plus what the environment asks for.
 */

/** Node flags: the README's, then `BENCH_SERVER_NODE_FLAGS` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; a later flag wins). */
export const serverNodeFlags = (): Array<string> => [
  "--max-old-space-size=256",
  ...(process.env.BENCH_SERVER_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "")
]

/**
 * glibc's malloc arenas for the server's process: 2, as the README recommends on Linux, unless `BENCH_MALLOC_ARENA_MAX`
 * says otherwise (empty: glibc's default, one arena per thread up to 8 per CPU).
 */
export const serverMallocEnv = (): Record<string, string> => {
  const arenas = process.env.BENCH_MALLOC_ARENA_MAX ?? "2"
  return arenas === "" ? {} : { MALLOC_ARENA_MAX: arenas }
}

/** A port on 127.0.0.1 that nothing listens on now, for a server about to start. */
export const freeLoopbackPort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** Whether the server at `url` answers its readiness check with 200 within 2 s. */
export const answersReady = (url: string) =>
  fetch(`${url}/healthcheck/ready`, { signal: AbortSignal.timeout(2000) }).then(
    (response) => response.status === 200,
    () => false
  )
