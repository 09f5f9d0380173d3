import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

/**
 * The floors of a core's `src/`, from the ground up: a file may import files of its own floor or of a lower one,
 * never of a higher one (shared/spec/architecture.md, "Layout").
 */
export const FLOORS = [
  "settings.ts",
  "api",
  "domain",
  "migrations",
  "storage",
  "services",
  "workers",
  "http",
  "config.ts",
  "layers.ts",
  "index.ts"
] as const

/** Packages a core never imports: database drivers (the host picks one) and the other cores. */
const FORBIDDEN_PACKAGES = [/^@effect\/sql-pg(\/|$)/, /^pg(\/|$)/, /^@electric-sql\/pglite(\/|$)/, /^@civicstack\/sql-pglite(\/|$)/, /^@civicstack\/core-/]

/** What the contract may import besides itself, so that an SDK built on it pulls no server code. */
const CONTRACT_PACKAGES = [/^effect(\/|$)/, /^@effect\/platform(\/|$)/, /^@civicstack\/kit\/access(\/public)?$/]

const SOURCE = /\.tsx?$/

const sourceFiles = (directory: string): ReadonlyArray<string> =>
  Fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(directory, entry.name)
    return entry.isDirectory() ? sourceFiles(path) : SOURCE.test(entry.name) ? [path] : []
  })

const resolveRelative = (from: string, specifier: string): string | undefined => {
  const base = Path.resolve(Path.dirname(from), specifier.replace(/\.js$/, ""))
  return [base, `${base}.ts`, `${base}.tsx`, Path.join(base, "index.ts"), Path.join(base, "index.tsx")]
    .find((candidate) => SOURCE.test(candidate) && Fs.existsSync(candidate))
}

const floorOf = (src: string, file: string): number => {
  const first = Path.relative(src, file).split(Path.sep)[0]!
  return FLOORS.indexOf(first as (typeof FLOORS)[number])
}

/** Every cycle of the import graph, each as the files on it (Tarjan's strongly connected components). */
const cyclesOf = (graph: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const lowest = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const cycles: Array<Array<string>> = []
  const visit = (file: string) => {
    index.set(file, index.size)
    lowest.set(file, index.get(file)!)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        lowest.set(file, Math.min(lowest.get(file)!, lowest.get(target)!))
      } else if (onStack.has(target)) {
        lowest.set(file, Math.min(lowest.get(file)!, index.get(target)!))
      }
    }
    if (lowest.get(file) === index.get(file)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== file)
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.reverse())
    }
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return cycles
}

/**
 * What breaks the layout rules in the core whose sources are in `src`: a file outside the floors, an import that
 * points up or out of the core's allowed packages, a contract importing more than effect and @effect/platform, and
 * every import cycle. Each problem is one line naming the files.
 */
export const layeringProblems = (src: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const graph = new Map<string, Array<string>>()
  const name = (file: string) => Path.relative(src, file)
  for (const file of sourceFiles(src)) {
    const floor = floorOf(src, file)
    if (floor === -1) problems.push(`${name(file)} is outside the layout (${FLOORS.join(", ")})`)
    const imports = new Set(ts.preProcessFile(Fs.readFileSync(file, "utf8"), true, true).importedFiles.map((entry) => entry.fileName))
    const targets: Array<string> = []
    for (const specifier of imports) {
      if (!specifier.startsWith(".")) {
        if (FORBIDDEN_PACKAGES.some((pattern) => pattern.test(specifier))) {
          problems.push(`${name(file)} imports ${specifier}: a core never imports a database driver or another core`)
        }
        if (FLOORS[floor] === "api" && !CONTRACT_PACKAGES.some((pattern) => pattern.test(specifier))) {
          problems.push(`${name(file)} imports ${specifier}: the contract imports only effect, @effect/platform and the kit's access`)
        }
        continue
      }
      const target = resolveRelative(file, specifier)
      if (target === undefined) {
        problems.push(`${name(file)} imports ${specifier}, which is not a source file`)
        continue
      }
      if (!target.startsWith(src + Path.sep)) {
        problems.push(`${name(file)} imports ${specifier}, outside the core's sources`)
        continue
      }
      targets.push(target)
      const targetFloor = floorOf(src, target)
      if (FLOORS[floor] === "settings.ts") {
        problems.push(`settings.ts imports ${name(target)}: settings import nothing of the core`)
      } else if (floor !== -1 && targetFloor > floor) {
        problems.push(`${name(file)} imports ${name(target)}, which is on a higher floor (${FLOORS[targetFloor]} above ${FLOORS[floor]})`)
      }
    }
    graph.set(file, targets)
  }
  for (const cycle of cyclesOf(graph)) problems.push(`import cycle: ${[...cycle, cycle[0]!].map(name).join(" -> ")}`)
  return problems
}
