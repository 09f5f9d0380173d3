import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

/** The line a server child prints on stdout once it listens, followed by its JSON description. */
export const readyLinePrefix = "SSO-BENCH-READY "

export const announceReady = (description: unknown) => {
  process.stdout.write(`${readyLinePrefix}${JSON.stringify(description)}\n`)
}

export interface ChildServer<A> {
  readonly description: A
  readonly pid: number
  readonly stop: () => Promise<void>
}

const stopChild = (child: ChildProcess, exited: Promise<unknown>) => async () => {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill("SIGTERM")
  const killLater = setTimeout(() => child.kill("SIGKILL"), 20_000)
  await exited
  clearTimeout(killLater)
}

/**
 * Runs a module of this directory in a child process of the same Node, loader and conditions, so that serving does
 * not share an event loop with autocannon; resolves with what it announces. Other output goes to stderr.
 */
export const startChildServer = async <A>(moduleName: string, args: ReadonlyArray<string> = []): Promise<ChildServer<A>> => {
  const entry = fileURLToPath(new URL(moduleName, import.meta.url))
  const child = spawn(process.execPath, [...process.execArgv, entry, ...args], { stdio: ["ignore", "pipe", "inherit"] })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const description = await new Promise<A>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.on("line", (line) => {
      if (line.startsWith(readyLinePrefix)) resolve(JSON.parse(line.slice(readyLinePrefix.length)) as A)
      else process.stderr.write(`[${moduleName}] ${line}\n`)
    })
    void exited.then((code) => reject(new Error(`${moduleName} exited with code ${code} before it was ready`)))
  })
  return { description, pid: child.pid!, stop: stopChild(child, exited) }
}
