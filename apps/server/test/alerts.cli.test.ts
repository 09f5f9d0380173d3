import * as Alerts from "@civicstack/core-alerts"
import { normaliseListCriteria } from "@civicstack/core-alerts"
import { keyedRecord } from "@civicstack/core-alerts/api"
import { Effect, Either, Exit, Layer, Scope } from "effect"
import { once } from "node:events"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startSmtpServer } from "../../../packages/core-alerts/test/fixtures/smtpServer"
import { databaseWithJobsLayer } from "../src/app"
import { parseServerConfig } from "../src/config"
import { alertsServiceLayer } from "../src/services/alerts"
import { freePort } from "@civicstack/kit/testing"
import { startCli } from "./serverProcess"
import { aNotification } from "../../../packages/core-alerts/test/fixtures/records"

let dataDir: string
let seeded: { readonly taxId: number; readonly vatId: number; readonly adaId: number; readonly bobId: number }

/** Lists, subscribers and a notification whose fan-out waits (no worker runs), written as the server would. */
const seed = (dir: string) => {
  const config = Either.getOrThrow(parseServerConfig({ DATA_DIR: dir, LOG_LEVEL: "warning" }))
  const service = alertsServiceLayer(config).pipe(Layer.provide(databaseWithJobsLayer(config)))
  return Effect.runPromise(Effect.gen(function*() {
    const alerts = yield* Alerts.Alerts
    const topicList = (title: string, topic: string) =>
      Effect.map(
        alerts.findOrCreateList({
          title,
          criteria: normaliseListCriteria({ tags: keyedRecord([["topics", [topic]]]), links: keyedRecord([]) })
        }),
        (found) => found.value
      )
    const tax = yield* topicList("Tax", "tax")
    const vat = yield* topicList("VAT rates", "vat")
    yield* alerts.subscribe({ address: "ada@example.com", subscriberListId: tax.id, frequency: "daily" })
    yield* alerts.subscribe({ address: "bob@example.com", subscriberListId: tax.id, frequency: "immediately" })
    const adaVat = yield* alerts.subscribe({ address: "ada@example.com", subscriberListId: vat.id, frequency: "weekly" })
    const bob = yield* alerts.subscribe({ address: "bob@example.com", subscriberListId: vat.id, frequency: "daily" })
    yield* alerts.unsubscribe(bob.value.id)
    yield* alerts.queueNotification(aNotification())
    return { taxId: tax.id, vatId: vat.id, adaId: adaVat.value.subscriberId, bobId: bob.value.subscriberId }
  }).pipe(Effect.provide(service)))
}

beforeAll(async () => {
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-alerts-cli-"))
  seeded = await seed(dataDir)
}, 120_000)
afterAll(async () => {
  if (dataDir !== undefined) await Fs.rm(dataDir, { recursive: true, force: true })
})

/** Runs `civicstack alerts <args>` on the test's data directory to the end; `stderr` apart from `stdout`. */
const alerts = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const cli = await startCli(["alerts", ...args], { DATA_DIR: dataDir, ...env })
  const closed = once(cli.child, "close")
  let stdout = ""
  let stderr = ""
  cli.child.stdout?.on("data", (chunk: Buffer) => { stdout += chunk.toString() })
  cli.child.stderr?.on("data", (chunk: Buffer) => { stderr += chunk.toString() })
  const [exitCode] = await Promise.all([cli.exited, closed])
  return { exitCode, stdout, stderr, output: cli.output() }
}

// Answers are checked field by field; `any` keeps those assertions readable.
const parsed = (stdout: string): any => JSON.parse(stdout)

const lines = (stdout: string) => stdout.split("\n").filter((line) => line !== "")

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe("civicstack alerts", () => {
  it("lists: every list with its active subscribers by frequency", { timeout: 120_000 }, async () => {
    const text = await alerts(["lists"])
    expect(text.exitCode, text.output).toBe(0)
    expect(lines(text.stdout)).toEqual([
      `tax  Tax  (id ${seeded.taxId})  active: immediately 1, daily 1, weekly 0`,
      `vat-rates  VAT rates  (id ${seeded.vatId})  active: immediately 0, daily 0, weekly 1`
    ])

    const json = await alerts(["lists", "--json"])
    expect(json.exitCode, json.output).toBe(0)
    expect(parsed(json.stdout)).toEqual({
      subscriber_lists: [
        { id: seeded.taxId, slug: "tax", title: "Tax", active_subscribers: { immediately: 1, daily: 1, weekly: 0 } },
        { id: seeded.vatId, slug: "vat-rates", title: "VAT rates", active_subscribers: { immediately: 0, daily: 0, weekly: 1 } }
      ]
    })
  })

  it("subscribers: a list's active subscribers, or one subscriber's subscriptions; refuses unknown lists and bad addresses", { timeout: 180_000 }, async () => {
    const listText = await alerts(["subscribers", "--list", "tax"])
    expect(listText.exitCode, listText.output).toBe(0)
    const [heading, ...rows] = lines(listText.stdout)
    expect(heading).toBe("Tax (tax): 2 active subscribers")
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(new RegExp(`^  ada@example\\.com  daily  subscriber ${seeded.adaId}  subscription [0-9a-f-]{36}$`))
    expect(rows[1]).toMatch(new RegExp(`^  bob@example\\.com  immediately  subscriber ${seeded.bobId}  subscription [0-9a-f-]{36}$`))

    const listJson = await alerts(["subscribers", "--list", "vat-rates", "--json"])
    expect(listJson.exitCode, listJson.output).toBe(0)
    expect(parsed(listJson.stdout)).toEqual({
      subscriber_list: { id: seeded.vatId, slug: "vat-rates", title: "VAT rates" },
      subscribers: [{
        id: seeded.adaId,
        address: "ada@example.com",
        deactivated_at: null,
        created_at: expect.any(String),
        subscription: { id: expect.stringMatching(UUID), frequency: "weekly", source: "user_signed_up", created_at: expect.any(String) }
      }]
    })

    const one = await alerts(["subscribers", "--address", "BOB@example.com", "--json"])
    expect(one.exitCode, one.output).toBe(0)
    const bob = parsed(one.stdout)
    expect(bob.subscriber).toMatchObject({ id: seeded.bobId, address: "bob@example.com", deactivated_at: null })
    expect(bob.subscriptions).toEqual([{
      id: expect.stringMatching(UUID),
      frequency: "immediately",
      source: "user_signed_up",
      created_at: expect.any(String),
      subscriber_list: { id: seeded.taxId, slug: "tax", title: "Tax" }
    }])

    const oneText = await alerts(["subscribers", "--address", "ada@example.com"])
    expect(oneText.exitCode, oneText.output).toBe(0)
    expect(lines(oneText.stdout).map((line) => line.replace(/subscription [0-9a-f-]{36}/, "subscription <id>"))).toEqual([
      `ada@example.com  (subscriber ${seeded.adaId})`,
      "  tax  Tax  daily  subscription <id>",
      "  vat-rates  VAT rates  weekly  subscription <id>"
    ])

    const unknownList = await alerts(["subscribers", "--list", "no-such-list", "--json"])
    expect(unknownList.exitCode).toBe(2)
    expect(unknownList.stdout).toBe("")
    expect(unknownList.stderr).toContain("Could not find the subscriber list")

    const badAddress = await alerts(["subscribers", "--address", "not an address"])
    expect(badAddress.exitCode).toBe(2)
    expect(badAddress.stdout).toBe("")
    expect(badAddress.stderr).toContain("address: ")

    const unknownSubscriber = await alerts(["subscribers", "--address", "nobody@example.com"])
    expect(unknownSubscriber.exitCode).toBe(2)
    expect(unknownSubscriber.stderr).toContain("Could not find the subscriber")
  })

  it("send-test queues a single email for the workers; queue shows it with the waiting fan-out and the health", { timeout: 180_000 }, async () => {
    const queuedJson = await alerts(["send-test", "--to", "ops@example.com", "--json"])
    expect(queuedJson.exitCode, queuedJson.output).toBe(0)
    expect(parsed(queuedJson.stdout)).toEqual({ queued: true, id: expect.stringMatching(UUID), address: "ops@example.com" })

    const queuedText = await alerts(["send-test", "--to", "ops@example.com"])
    expect(queuedText.exitCode, queuedText.output).toBe(0)
    expect(queuedText.stdout).toMatch(/^Queued test email [0-9a-f-]{36} to ops@example\.com; the server's workers send it\n$/)

    const refused = await alerts(["send-test", "--to", "ops at example", "--json"])
    expect(refused.exitCode).toBe(2)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toContain("to: ")

    const report = await alerts(["queue", "--json"])
    expect(report.exitCode, report.output).toBe(0)
    expect(parsed(report.stdout)).toEqual({
      emails: { pending: 2, sending: 0, sent: 0, failed: 0 },
      oldest_pending_email_age_seconds: expect.any(Number),
      fan_out_jobs: { waiting: 1, running: 0, dead: 0 },
      digest_jobs: { waiting: 0, running: 0, dead: 0 },
      health: { status: "ok", queue_size: "ok", queue_age: "ok" }
    })

    const text = await alerts(["queue"])
    expect(text.exitCode, text.output).toBe(0)
    const [emails, oldest, fanOut, digest, health] = lines(text.stdout)
    expect(emails).toBe("emails: 2 pending, 0 sending, 0 sent, 0 failed")
    expect(oldest).toMatch(/^oldest pending email: \d+ s$/)
    expect(fanOut).toBe("fan-out jobs: 1 waiting, 0 running, 0 dead")
    expect(digest).toBe("digest jobs: 0 waiting, 0 running, 0 dead")
    expect(health).toBe("health: ok (queue size ok, queue age ok)")
  })

  it("send-test --now sends through the configured SMTP server, and exits 1 with the failure when it cannot", { timeout: 120_000 }, async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const smtp = await Effect.runPromise(Scope.extend(startSmtpServer(), scope))
      const env = { EMAIL_PROVIDER: "smtp", SMTP_URL: smtp.url, EMAIL_FROM: "alerts@example.org" }
      const sent = await alerts(["send-test", "--to", "ops@example.com", "--now", "--json"], env)
      expect(sent.exitCode, sent.output).toBe(0)
      const answer = parsed(sent.stdout)
      expect(answer).toEqual({ sent: true, id: expect.stringMatching(UUID), address: "ops@example.com", provider: "smtp" })
      expect(smtp.received).toHaveLength(1)
      expect(smtp.received[0]!.envelopeTo).toEqual(["ops@example.com"])
      expect(smtp.received[0]!.parsed.subject).toBe(Alerts.TEST_EMAIL_SUBJECT)
      expect(smtp.received[0]!.parsed.text).toContain("check the email provider settings")

      const text = await alerts(["send-test", "--to", "ops@example.com", "--now"], env)
      expect(text.exitCode, text.output).toBe(0)
      expect(text.stdout).toMatch(/^Sent test email [0-9a-f-]{36} to ops@example\.com through the smtp provider\n$/)
      expect(smtp.received).toHaveLength(2)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }

    const closedPort = await freePort()
    const closedEnv = { EMAIL_PROVIDER: "smtp", SMTP_URL: `smtp://127.0.0.1:${closedPort}` }
    const failed = await alerts(["send-test", "--to", "ops@example.com", "--now", "--json"], closedEnv)
    expect(failed.exitCode, failed.output).toBe(1)
    expect(parsed(failed.stdout)).toEqual({
      sent: false,
      provider: "smtp",
      failure: "temporary",
      reason: expect.stringContaining("ECONNREFUSED")
    })
    const failedText = await alerts(["send-test", "--to", "ops@example.com", "--now"], closedEnv)
    expect(failedText.exitCode).toBe(1)
    expect(failedText.stdout).toMatch(/^Not sent: the smtp provider failed \(temporary\): .*ECONNREFUSED/)

    // sending now leaves the queue alone
    const report = await alerts(["queue", "--json"])
    expect(parsed(report.stdout).emails).toEqual({ pending: 2, sending: 0, sent: 0, failed: 0 })
  })
})
