#!/usr/bin/env -S node --max-old-space-size=256
// Runs the built CLI when it exists; in a fresh clone (no build step) runs the TypeScript sources through tsx. The
// heap limit is the one the README recommends (see "Memory"); the shebang is where an installed command can set it.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const built = fileURLToPath(new URL("../dist/cli.js", import.meta.url))
if (existsSync(built)) {
  await import(built)
} else {
  const sources = fileURLToPath(new URL("../src/cli.ts", import.meta.url))
  const child = spawn(
    process.execPath,
    ["--conditions=@civicstack/source", "--import", import.meta.resolve("tsx"), sources, ...process.argv.slice(2)],
    { stdio: "inherit" }
  )
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal))
  child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 0 : 1)))
}
