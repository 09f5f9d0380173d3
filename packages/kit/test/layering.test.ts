import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { FLOORS, layeringProblems } from "./layering"

const packages = fileURLToPath(new URL("../..", import.meta.url))
const CORES = ["core-sso", "core-alerts", "core-linkcheck"]

/** The top-level entries of a folder: directories end with "/". */
const entriesOf = (directory: string) =>
  Fs.readdirSync(directory, { withFileTypes: true }).map((entry) => entry.isDirectory() ? `${entry.name}/` : entry.name).sort()

describe("every core's layout", () => {
  it.each(CORES)("%s imports only downwards, with no cycle, no database driver and no other core", (core) => {
    expect(layeringProblems(Path.join(packages, core, "src"))).toEqual([])
  })

  it.each(CORES)("%s has the same folders and root files as every core", (core) => {
    const expected = FLOORS.map((floor) => floor.endsWith(".ts") ? floor : `${floor}/`).sort()
    expect(entriesOf(Path.join(packages, core, "src"))).toEqual(expected)
  })

  it.each(CORES)("%s has tests in folders that mirror src, its own HTTP tests among them, and of the packed package", (core) => {
    // `install.test.ts` is about the package as a project installs it, not about one floor
    const mirrored = new Set([
      "api/", "domain/", "migrations/", "storage/", "services/", "workers/", "http/", "fixtures/", "install.test.ts"
    ])
    const folders = entriesOf(Path.join(packages, core, "test"))
    expect(folders.filter((entry) => !mirrored.has(entry))).toEqual([])
    expect(folders).toEqual(expect.arrayContaining(["http/", "services/", "storage/"]))
  })
})

describe("the layering check", () => {
  const core = Fs.mkdtempSync(Path.join(Os.tmpdir(), "layering-"))
  afterAll(() => Fs.rmSync(core, { recursive: true, force: true }))
  const write = (file: string, text: string) => {
    Fs.mkdirSync(Path.dirname(Path.join(core, file)), { recursive: true })
    Fs.writeFileSync(Path.join(core, file), text)
  }

  it("finds an upward import, a cycle, a driver, a contract importing a service and a file outside the floors", () => {
    write("settings.ts", `export const defaults = {}\n`)
    write("domain/rules.ts", `import type { Store } from "../storage/Store"\nexport const rule = 1\n`)
    write("storage/Store.ts", `import { rule } from "../domain/rules"\nimport { PgClient } from "@effect/sql-pg"\nexport type Store = {}\n`)
    write("api/contract.ts", `import { Schema } from "effect"\nimport { jose } from "jose"\nexport const Body = Schema.String\n`)
    write("services/a.ts", `import { b } from "./b"\nexport const a = 1\n`)
    write("services/b.ts", `import { a } from "./a"\nexport const b = 2\n`)
    write("wire.ts", `export const wire = 1\n`)
    const problems = layeringProblems(core)
    expect(problems).toEqual(expect.arrayContaining([
      "domain/rules.ts imports storage/Store.ts, which is on a higher floor (storage above domain)",
      "storage/Store.ts imports @effect/sql-pg: a core never imports a database driver or another core",
      "api/contract.ts imports jose: the contract imports only effect, @effect/platform and the kit's access",
      expect.stringMatching(/^import cycle: services\/(a|b)\.ts -> services\/(a|b)\.ts -> services\/(a|b)\.ts$/),
      expect.stringMatching(/^import cycle: .*domain\/rules\.ts.*storage\/Store\.ts|^import cycle: .*storage\/Store\.ts.*domain\/rules\.ts/),
      `wire.ts is outside the layout (${FLOORS.join(", ")})`
    ]))
    expect(problems).toHaveLength(6)
  })

  it("finds settings that import the core", () => {
    write("settings.ts", `import type { Store } from "./storage/Store"\nexport const defaults = {}\n`)
    expect(layeringProblems(core)).toContain("settings.ts imports storage/Store.ts: settings import nothing of the core")
  })
})
