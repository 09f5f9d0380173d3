import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted, TestClock } from "effect"
import { memoryPorts, serviceWithQueue } from "../../src/layers"
import { Alerts } from "../../src/services/Alerts"
import { RecordingEmailQueue, recordingEmailQueue } from "../fixtures/recordingEmailQueue"

const service = serviceWithQueue({
  authTokenSecret: Redacted.make("h".repeat(40)),
  healthThresholds: {
    queueSize: { warning: 10, critical: 20 },
    queueAge: { warning: Duration.seconds(5), critical: Duration.minutes(1) }
  }
}).pipe(Layer.provideMerge(recordingEmailQueue), Layer.provide(memoryPorts()))

describe("health against the thresholds of the settings", () => {
  it.effect("grades with the configured thresholds, the oldest email's age from Clock", () =>
    Effect.gen(function*() {
      const alerts = yield* Alerts
      const recording = yield* RecordingEmailQueue
      yield* TestClock.setTime(1_000_000)
      const queuedAt = new Date(1_000_000)
      yield* recording.setFigures({ size: 9, oldestImmediatePendingSince: queuedAt })
      expect(yield* alerts.health).toMatchObject({ queueSize: "ok", queueAge: "ok", delivery: "ok", status: "ok" })
      yield* recording.setFigures({ size: 10, oldestImmediatePendingSince: queuedAt })
      yield* TestClock.adjust("5 seconds")
      expect(yield* alerts.health).toMatchObject({ queueSize: "warning", queueAge: "warning", status: "warning" })
      yield* TestClock.adjust("55 seconds")
      expect(yield* alerts.health).toMatchObject({ queueSize: "warning", queueAge: "critical", status: "critical" })
      yield* recording.setFigures({ size: 20, oldestImmediatePendingSince: null })
      expect(yield* alerts.health).toMatchObject({ queueSize: "critical", queueAge: "ok", status: "critical" })
    }).pipe(Effect.provide(service)))
})
