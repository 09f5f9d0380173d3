import { type ChildProcess, spawn } from "node:child_process"
import { freePort } from "@civicstack/kit/testing"
import { builtCli } from "./builtServer"

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/**
 * Starts `civicstack <args>`, built from the sources for this run (or the `civicstack` executable given), with only
 * the given environment on top of PATH.
 */
export const startCli = async (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  executable?: string
): Promise<ServerProcess> => {
  const port = env.PORT ?? String(await freePort())
  const [command, ...commandArgs] = executable === undefined ? [process.execPath, builtCli] : [executable]
  const child = spawn(command!, [...commandArgs, ...args], {
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: port, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on("data", (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { url: `http://127.0.0.1:${port}`, child, output: () => output, exited }
}

/** Polls until the server answers 200 on /healthcheck/ready, or fails with its output. */
export const waitUntilReady = async (server: ServerProcess, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  let exitCode: number | null | undefined
  void server.exited.then((code) => { exitCode = code })
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`server exited with ${exitCode}:\n${server.output()}`)
    const ready = await fetch(`${server.url}/healthcheck/ready`, { signal: AbortSignal.timeout(10_000) }).then(
      (response) => response.status === 200,
      (error: Error) => {
        // refused while starting is expected; an accepted connection left unanswered is a defect
        if (error.name === "TimeoutError") throw new Error(`a request was not answered within 10 s:\n${server.output()}`)
        return false
      }
    )
    if (ready) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`server not ready within ${timeoutMs} ms:\n${server.output()}`)
}

const STOP_TIMEOUT_MS = 45_000

/** SIGTERM, then the exit code; a server still running 45 s later is killed and the test fails with its output. */
export const stop = async (server: ServerProcess) => {
  const timeoutMs = STOP_TIMEOUT_MS
  server.child.kill("SIGTERM")
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<"late">((resolve) => { timer = setTimeout(() => resolve("late"), timeoutMs) })
  const code = await Promise.race([server.exited, late])
  clearTimeout(timer)
  if (code !== "late") return code
  server.child.kill("SIGKILL")
  await server.exited
  throw new Error(`server still running ${timeoutMs} ms after SIGTERM:\n${server.output().slice(-8000)}`)
}
