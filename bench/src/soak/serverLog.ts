import * as Fs from "node:fs/promises"

export interface LogSummary {
  /** Lines per `logLevel` of the server's JSON logger; `other` for lines that are not its JSON. */
  readonly linesByLevel: ReadonlyMap<string, number>
  /** The most frequent messages at WARN or above, with their counts. */
  readonly topProblems: ReadonlyArray<{ readonly level: string; readonly message: string; readonly count: number }>
}

const messageOf = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value)).slice(0, 200)

/** Reads the server's output, one JSON object a line from Effect's JSON logger. */
export const summariseLog = async (file: string, top = 5): Promise<LogSummary> => {
  const linesByLevel = new Map<string, number>()
  const problems = new Map<string, { level: string; message: string; count: number }>()
  const text = await Fs.readFile(file, "utf8")
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    let level = "other"
    let message = line.slice(0, 200)
    try {
      const entry = JSON.parse(line) as { logLevel?: unknown; message?: unknown }
      if (typeof entry.logLevel === "string") level = entry.logLevel
      message = messageOf(entry.message)
    } catch {
      // a line of another writer (Node's warnings, a crash's stack)
    }
    linesByLevel.set(level, (linesByLevel.get(level) ?? 0) + 1)
    if (level === "INFO" || level === "DEBUG" || level === "TRACE") continue
    const key = `${level} ${message}`
    const known = problems.get(key)
    if (known === undefined) problems.set(key, { level, message, count: 1 })
    else known.count += 1
  }
  return {
    linesByLevel,
    topProblems: [...problems.values()].sort((a, b) => b.count - a.count).slice(0, top)
  }
}
