import { BatchReport } from "@civicstack/core-linkcheck/api"
import { Schema } from "effect"
import { once } from "node:events"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import type { FixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import { startCli } from "./serverProcess"

let fleet: FixtureFleet
let workDir: string

beforeAll(async () => {
  fleet = await startFixtureFleet()
  workDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-linkcheck-cli-"))
})

afterAll(async () => {
  await fleet?.close()
  if (workDir !== undefined) await Fs.rm(workDir, { recursive: true, force: true })
})

/** Runs `civicstack linkcheck <args>` to the end; `stdout` alone, `output` is stdout and stderr together. */
const linkcheck = async (...args: ReadonlyArray<string>) => {
  const cli = await startCli(["linkcheck", ...args], { LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true" })
  const closed = once(cli.child, "close")
  let stdout = ""
  cli.child.stdout?.on("data", (chunk: Buffer) => { stdout += chunk.toString() })
  const [exitCode] = await Promise.all([cli.exited, closed])
  return { exitCode, stdout, output: cli.output() }
}

const stdoutLines = (stdout: string) => stdout.split("\n").filter((line) => line !== "")

const writeLinkFile = async (name: string, content: string) => {
  const file = Path.join(workDir, name)
  await Fs.writeFile(file, content)
  return file
}

describe("civicstack linkcheck check <uri...>", () => {
  it("prints one line per link with its status and problem, then totals, and exits 1 when a link is broken", { timeout: 120_000 }, async () => {
    const { exitCode, output, stdout } = await linkcheck(
      "check",
      `${fleet.http}/ok`,
      `${fleet.http}/status/404`,
      "mailto:editor@example.org"
    )

    expect(exitCode, output).toBe(1)
    const lines = stdoutLines(stdout)
    expect(lines).toHaveLength(4)
    expect(lines[0]).toBe(`ok      ${fleet.http}/ok`)
    expect(lines[1]).toMatch(new RegExp(`^broken  ${fleet.http}/status/404  Page not found: .+`))
    expect(lines[2]).toMatch(/^caution mailto:editor@example\.org {2}Contact details: .+/)
    expect(lines[3]).toBe("3 links: 1 ok, 1 caution, 1 broken")
  })

  it("exits 0 when no link is broken, even with cautions", { timeout: 120_000 }, async () => {
    const { exitCode, output, stdout } = await linkcheck("check", `${fleet.http}/ok`, `${fleet.http}/redirect/chain/2`)

    expect(exitCode, output).toBe(0)
    expect(stdoutLines(stdout)).toEqual([
      `ok      ${fleet.http}/ok`,
      expect.stringMatching(new RegExp(`^caution ${fleet.http}/redirect/chain/2  Bad redirect: .+`)),
      "2 links: 1 ok, 1 caution, 0 broken"
    ])
  })
})

describe("civicstack linkcheck batch <file>", () => {
  it("with --json prints the BatchReport: links in file order, totals per status", { timeout: 120_000 }, async () => {
    const file = await writeLinkFile("pages.txt", [
      "# links of the guidance pages",
      `${fleet.http}/status/410`,
      "",
      `${fleet.http}/ok`,
      `${fleet.http}/redirect/chain/1`,
      "mailto:editor@example.org",
      ""
    ].join("\n"))

    const { exitCode, output, stdout } = await linkcheck("batch", file, "--json")

    expect(exitCode, output).toBe(1)
    const report = Schema.decodeUnknownSync(BatchReport)(JSON.parse(stdout))
    expect(report.status).toBe("completed")
    expect(report.completed_at).toBeInstanceOf(Date)
    expect(report.links.map((link) => [link.uri, link.status])).toEqual([
      [`${fleet.http}/status/410`, "broken"],
      [`${fleet.http}/ok`, "ok"],
      [`${fleet.http}/redirect/chain/1`, "ok"],
      ["mailto:editor@example.org", "caution"]
    ])
    expect(report.links[0]?.problem_summary).toBe("Page not found")
    expect(report.totals).toEqual({ links: 4, ok: 2, caution: 1, broken: 1, pending: 0, danger: 0 })
  })

  it("skips comments and blank lines (CRLF too), prints one line per link and exits 0 when none is broken", { timeout: 120_000 }, async () => {
    const file = await writeLinkFile("windows.txt", [
      "# exported from the content system",
      "   ",
      `  ${fleet.http}/ok  `,
      "  # an indented comment",
      `${fleet.http}/text`,
      ""
    ].join("\r\n"))

    const { exitCode, output, stdout } = await linkcheck("batch", file)

    expect(exitCode, output).toBe(0)
    expect(stdoutLines(stdout)).toEqual([
      `ok      ${fleet.http}/ok`,
      `ok      ${fleet.http}/text`,
      "2 links: 2 ok, 0 caution, 0 broken"
    ])
  })

  it("explains a missing file and exits 2 without output on stdout", { timeout: 120_000 }, async () => {
    const missing = Path.join(workDir, "no-such-file.txt")

    const { exitCode, output, stdout } = await linkcheck("batch", missing, "--json")

    expect(exitCode, output).toBe(2)
    expect(stdout).toBe("")
    expect(output).toContain(`Cannot read links from ${missing}: ENOENT: no such file or directory`)
  })

  it("explains a file that lists no links and exits 2", { timeout: 120_000 }, async () => {
    const file = await writeLinkFile("empty.txt", "# nothing to check yet\n\n")

    const { exitCode, output, stdout } = await linkcheck("batch", file)

    expect(exitCode, output).toBe(2)
    expect(stdout).toBe("")
    expect(output).toContain(`${file} has no links`)
  })
})
