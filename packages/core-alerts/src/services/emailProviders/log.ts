import { randomUUID } from "node:crypto"
import { link, mkdir, unlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { now as currentDate } from "@civicstack/kit"
import { Effect, Layer } from "effect"
import { EmailProvider, TemporaryDeliveryFailure } from "../EmailProvider"
import type { OutgoingEmail } from "../EmailProvider"
import { renderEmail } from "../../domain/render"
import { unsubscribeHeaders } from "./headers"

export interface LogProviderSettings {
  /** One JSON file per email lands here; created when missing. */
  readonly outboxDirectory: string
}

/** What one outbox file holds: the message as the smtp provider would send it, and the Markdown it came from. */
export interface OutboxMessage {
  readonly id: string
  readonly to: string
  readonly subject: string
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly html: string
  readonly markdown: string
  readonly writtenAt: string
}

/** `20261125T114952123Z`: fixed width, so names sort by time. */
const compactTimestamp = (date: Date): string => date.toISOString().replace(/[-:.]/g, "")

const safeForFileName = (id: string): string => id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100)

const isAlreadyThere = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === "EEXIST"

/**
 * Gives the written temporary file its final name without ever replacing a file: a hard link fails when the name
 * is taken (the same email written twice in one millisecond, by this copy or another), and the next suffix is tried.
 */
const publish = async (temporaryPath: string, directory: string, baseName: string): Promise<string> => {
  for (let attempt = 1; ; attempt++) {
    const name = attempt === 1 ? `${baseName}.json` : `${baseName}-${attempt}.json`
    try {
      await link(temporaryPath, join(directory, name))
      return name
    } catch (error) {
      if (!isAlreadyThere(error) || attempt >= 1000) throw error
    }
  }
}

const writeAtomically = async (directory: string, baseName: string, contents: string): Promise<string> => {
  const temporaryPath = join(directory, `.${baseName}.${randomUUID()}.tmp`)
  await writeFile(temporaryPath, contents, { encoding: "utf8", flag: "wx" })
  try {
    return await publish(temporaryPath, directory, baseName)
  } finally {
    await unlink(temporaryPath).catch(() => undefined)
  }
}

/** Writes each email to the outbox directory and logs one line about it: for development and for tests. */
export const makeLogProvider = (settings: LogProviderSettings): Effect.Effect<EmailProvider["Type"]> =>
  Effect.gen(function*() {
    const directory = settings.outboxDirectory
    yield* Effect.tryPromise(() => mkdir(directory, { recursive: true })).pipe(
      Effect.orDieWith((error) => new Error(`the email outbox ${directory} cannot be created: ${String(error)}`))
    )
    const send = (email: OutgoingEmail) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const { html, text } = renderEmail({ subject: email.subject, body: email.body })
        const message: OutboxMessage = {
          id: email.id,
          to: email.address,
          subject: email.subject,
          headers: unsubscribeHeaders(email.unsubscribeUrl),
          text,
          html,
          markdown: email.body,
          writtenAt: now.toISOString()
        }
        const baseName = `${compactTimestamp(now)}-${safeForFileName(email.id)}`
        const file = yield* Effect.tryPromise({
          try: () => writeAtomically(directory, baseName, `${JSON.stringify(message, null, 2)}\n`),
          catch: (error) =>
            new TemporaryDeliveryFailure({ reason: `the email could not be written to ${directory}: ${String(error)}` })
        })
        yield* Effect.logInfo("email written to the outbox").pipe(
          Effect.annotateLogs({ emailId: email.id, to: email.address, file: join(directory, file) })
        )
      })
    return { name: "log", send }
  })

export const logProviderLayer = (settings: LogProviderSettings): Layer.Layer<EmailProvider> =>
  Layer.effect(EmailProvider, makeLogProvider(settings))
