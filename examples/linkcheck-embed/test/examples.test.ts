import { SIGNATURE_HEADER, signWebhookBody } from "@civicstack/core-linkcheck"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const embedDirectory = fileURLToPath(new URL("..", import.meta.url))
const webhookDirectory = fileURLToPath(new URL("../../linkcheck-webhook", import.meta.url))

interface ExampleProcess {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
}

/** Starts an example as its `npm start` script does, with only the given environment on top of PATH. */
const startExample = (directory: string, args: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, ["--conditions=@civicstack/source", "--import", "tsx", "src/main.ts", ...args], {
    cwd: directory,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr?.on("data", (chunk: Buffer) => { stderr += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const example: ExampleProcess = { child, stdout: () => stdout, stderr: () => stderr, exited }
  return example
}

const lines = (text: string) => text.split("\n")

/** Resolves with the first output line matching `pattern`, or fails when the example exits or time runs out. */
const waitForLine = async (example: ExampleProcess, pattern: RegExp, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  let exitCode: number | null | undefined
  void example.exited.then((code) => { exitCode = code })
  while (Date.now() < deadline) {
    const line = lines(example.stdout()).find((candidate) => pattern.test(candidate))
    if (line !== undefined) return line
    if (exitCode !== undefined) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no line matching ${pattern}:\n${example.stdout()}\n${example.stderr()}`)
}

describe("examples/linkcheck-embed", () => {
  it("checks its local links as one batch and prints each link's status, problem and message", { timeout: 90_000 }, async () => {
    const example = startExample(embedDirectory)
    const exitCode = await example.exited
    const output = example.stdout()
    expect(exitCode, `${output}\n${example.stderr()}`).toBe(0)

    expect(output).toMatch(/^Batch \d+ created with 4 links$/m)
    const newSite = output.match(/^ok {6}(http:\/\/127\.0\.0\.1:\d+)\/guidance$/m)?.[1]
    expect(newSite).toBeDefined()
    expect(output).toContain(`broken  ${newSite}/missing-page  Page not found: The page could not be found (error 404).`)
    expect(output).toMatch(/^caution http:\/\/127\.0\.0\.1:\d+\/guidance {2}Bad redirect: .*2 redirects/m)
    expect(output).toContain(`fix: Link directly to ${newSite}/guidance instead.`)
    expect(output).toMatch(/^caution mailto:help@example\.org {2}Contact details: This link starts an email/m)
    expect(output).toMatch(/^4 links: 1 ok, 2 caution, 1 broken$/m)
  })
})

describe("examples/linkcheck-webhook", () => {
  it("run alone, accepts a correctly signed webhook, refuses a forged one and exits 0", { timeout: 90_000 }, async () => {
    const example = startExample(webhookDirectory)
    const exitCode = await example.exited
    const output = example.stdout()
    expect(exitCode, `${output}\n${example.stderr()}`).toBe(0)

    expect(output).toMatch(/^Correctly signed webhook: answered 204$/m)
    expect(output).toMatch(/^Forged webhook: answered 401$/m)
    const received = lines(output).filter((line) => line.startsWith("Received batch"))
    expect(received).toEqual([
      "Received batch 1, completed at 2026-01-15T09:30:01.000Z: 2 links, 1 ok, 0 caution, 1 broken"
    ])
    expect(output).toMatch(/^ {2}broken {2}https:\/\/www\.example\.org\/missing-page {2}Page not found$/m)
  })

  it("with --listen, verifies webhooks signed by the service until stopped", { timeout: 90_000 }, async () => {
    const secretToken = "shared with the link checker"
    const example = startExample(webhookDirectory, ["--listen"], { LINKCHECK_WEBHOOK_SECRET: secretToken, PORT: "0" })
    try {
      const url = (await waitForLine(example, /^Waiting for webhooks on /)).match(/http:\/\/\S+/)?.[0] ?? ""
      const body = JSON.stringify({
        id: 42,
        status: "completed",
        links: [],
        totals: { links: 0, ok: 0, caution: 0, broken: 0, pending: 0, danger: 0 },
        completed_at: "2026-03-01T12:00:00Z"
      })
      const post = (headers: Record<string, string>, payload = body) =>
        fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: payload })

      expect((await post({ [SIGNATURE_HEADER]: signWebhookBody(body, secretToken) })).status).toBe(204)
      await waitForLine(example, /^Received batch 42, completed at 2026-03-01T12:00:00\.000Z: 0 links/)

      expect((await post({})).status).toBe(401)
      expect((await post({ [SIGNATURE_HEADER]: signWebhookBody(body, "another secret") })).status).toBe(401)
      const notAReport = "{\"id\":43}"
      expect((await post({ [SIGNATURE_HEADER]: signWebhookBody(notAReport, secretToken) }, notAReport)).status).toBe(400)
      expect((await fetch(url)).status).toBe(405)

      expect(lines(example.stdout()).filter((line) => line.startsWith("Received batch"))).toHaveLength(1)
    } finally {
      example.child.kill("SIGTERM")
    }
    expect(await example.exited).toBe(0)
  })

  it("with --listen, refuses to start without a secret", { timeout: 90_000 }, async () => {
    const example = startExample(webhookDirectory, ["--listen"])
    expect(await example.exited).toBe(1)
    expect(example.stderr()).toContain("LINKCHECK_WEBHOOK_SECRET")
  })
})
