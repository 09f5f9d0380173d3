import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, HashMap, Layer, Logger, TestClock } from "effect"
import { EmailProvider } from "../../../src/services/EmailProvider"
import { logProviderLayer } from "../../../src/services/emailProviders/log"
import type { OutboxMessage } from "../../../src/services/emailProviders/log"

const directories: Array<string> = []
afterEach(async () => {
  await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })))
})

const freshOutbox = Effect.promise(async () => {
  const parent = await mkdtemp(join(tmpdir(), "alerts-outbox-"))
  directories.push(parent)
  return join(parent, "data", "outbox")
})

const readOutbox = (directory: string) =>
  Effect.promise(async () => {
    const names = (await readdir(directory)).sort()
    const messages = await Promise.all(
      names.map(async (name) => JSON.parse(await readFile(join(directory, name), "utf8")) as OutboxMessage)
    )
    return { names, messages }
  })

const send = (email: Parameters<EmailProvider["Type"]["send"]>[0]) => Effect.flatMap(EmailProvider, (p) => p.send(email))

describe("log provider", () => {
  it.effect("writes one readable JSON file per email, creating the outbox", () =>
    Effect.gen(function*() {
      const outbox = yield* freshOutbox
      yield* TestClock.setTime(Date.parse("2026-11-25T08:30:00.250Z"))
      yield* send({
        id: "0d8f8b1e-2c4f-4c55-9a53-d3a1c0b6e001",
        address: "reader@example.org",
        subject: "Tax changes",
        body: "# Tax\n\nRead [the guide](https://www.gov.uk/guide).",
        unsubscribeUrl: "https://alerts.example/unsubscribe/abc"
      }).pipe(Effect.provide(logProviderLayer({ outboxDirectory: outbox })))
      const { messages, names } = yield* readOutbox(outbox)
      expect(names).toEqual(["20261125T083000250Z-0d8f8b1e-2c4f-4c55-9a53-d3a1c0b6e001.json"])
      expect(messages[0]).toEqual({
        id: "0d8f8b1e-2c4f-4c55-9a53-d3a1c0b6e001",
        to: "reader@example.org",
        subject: "Tax changes",
        headers: {
          "List-Unsubscribe": "<https://alerts.example/unsubscribe/abc>",
          "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"
        },
        text: "Tax\n===\n\nRead the guide (https://www.gov.uk/guide).\n",
        html: expect.stringContaining("<h1>Tax</h1>"),
        markdown: "# Tax\n\nRead [the guide](https://www.gov.uk/guide).",
        writtenAt: "2026-11-25T08:30:00.250Z"
      })
      expect(messages[0]!.html).toContain("<title>Tax changes</title>")
    }))

  it.effect("never overwrites: the same email twice in one millisecond makes two files, and names sort by time", () =>
    Effect.gen(function*() {
      const outbox = yield* freshOutbox
      const layer = logProviderLayer({ outboxDirectory: outbox })
      yield* Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-11-25T09:00:00.000Z"))
        yield* send({ id: "later", address: "a@example.org", subject: "third", body: "3" })
        yield* TestClock.setTime(Date.parse("2026-11-25T08:00:00.000Z"))
        yield* send({ id: "same", address: "a@example.org", subject: "first", body: "1" })
        yield* send({ id: "same", address: "a@example.org", subject: "second", body: "2" })
        yield* Effect.all(
          Array.from({ length: 20 }, (_, index) =>
            send({ id: "burst", address: "b@example.org", subject: `burst ${index}`, body: "x" })),
          { concurrency: "unbounded" }
        )
      }).pipe(Effect.provide(layer))
      const { messages, names } = yield* readOutbox(outbox)
      expect(names).toHaveLength(23)
      expect(names.every((name) => name.endsWith(".json"))).toBe(true)
      expect(new Set(messages.filter((m) => m.id === "burst").map((m) => m.subject)).size).toBe(20)
      expect(messages.filter((m) => m.id === "same").map((m) => m.subject).sort()).toEqual(["first", "second"])
      expect(messages.at(-1)!.subject).toBe("third")
    }))

  it.effect("logs one line per email with its id and address", () =>
    Effect.gen(function*() {
      const outbox = yield* freshOutbox
      const lines: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
      const capture = Logger.make(({ annotations, message }) => {
        lines.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
      })
      yield* send({ id: "e-1", address: "reader@example.org", subject: "s", body: "b" }).pipe(
        Effect.provide(Layer.merge(logProviderLayer({ outboxDirectory: outbox }), Logger.replace(Logger.defaultLogger, capture)))
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]!.annotations).toMatchObject({ emailId: "e-1", to: "reader@example.org" })
      expect(String(lines[0]!.annotations["file"])).toContain(outbox)
    }))
})
