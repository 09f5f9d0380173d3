import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { loggingLayer, redactUrl, redactUrls } from "../src/logging"

afterEach(() => {
  vi.restoreAllMocks()
})

describe("the server's log lines", () => {
  it("show URLs without their userinfo and query values", () => {
    expect(redactUrl("https://user:s3cret@hooks.example/batch?key=abc123&id=7")).toBe("https://hooks.example/batch?key=redacted&id=redacted")
    expect(redactUrl("https://hooks.example/batch")).toBe("https://hooks.example/batch")
    expect(redactUrl("http://site.example/a?token")).toBe("http://site.example/a?token=redacted")
    expect(redactUrl("not a url")).toBe("not a url")
    expect(redactUrls(`{"message":"failed https://x.example/p?api_key=k1, then http://y.example/?t=k2","uri":"https://u:p@z.example/"}`))
      .toBe(`{"message":"failed https://x.example/p?api_key=redacted then http://y.example/?t=redacted","uri":"https://z.example/"}`)
  })

  it("are JSON with every URL redacted, in messages, annotations and causes", async () => {
    const lines: Array<string> = []
    vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      lines.push(String(line))
    })
    await Effect.runPromise(
      Effect.logWarning("Webhook refused: https://hooks.example/done?secret=webhook-secret-1").pipe(
        Effect.annotateLogs({
          uri: "https://admin:hunter2@hooks.example/done?key=query-secret-2",
          "http.url": "/check?uri=https%3A%2F%2Fsite.example%2F%3Ftoken%3Dpath-secret-4&synchronous=true"
        }),
        Effect.zipRight(Effect.logError("failed", new Error("fetching https://x.example/?token=token-secret-3"))),
        Effect.provide(loggingLayer("info"))
      )
    )
    expect(lines).toHaveLength(2)
    for (const line of lines) {
      expect(() => JSON.parse(line)).not.toThrow()
      for (const secret of ["webhook-secret-1", "hunter2", "query-secret-2", "token-secret-3", "path-secret-4"]) expect(line).not.toContain(secret)
    }
    expect(JSON.parse(lines[0]!)).toMatchObject({
      annotations: { uri: "https://hooks.example/done?key=redacted", "http.url": "/check?uri=redacted&synchronous=redacted" }
    })
  })
})
