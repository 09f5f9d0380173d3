import type { Backend } from "./settings"

export interface CaseFigures {
  readonly subscribers: number
  readonly seedSeconds: number
  readonly rawInsertSeconds: number
  readonly rawBodyLength: number
  /** From the matching POST to n emails observed; null when they never all appeared. */
  readonly fanOutSeconds: number | null
  readonly fanOutBodyLength: number | null
  readonly posts: { readonly sent: number; readonly answered202: number; readonly p50Ms: number | null; readonly p99Ms: number | null; readonly maxMs: number | null }
  /** Distinct emails the sink received, per second, from the first to the last. */
  readonly deliveryPerSecond: number | null
  readonly delivered: number
  readonly sinkRequests: number
  /** Of the copy that runs the workers: the only copy, or in `pg-split` the one not taking the POSTs. */
  readonly peakRssMb: number | null
  readonly notes: ReadonlyArray<string>
}

export type CaseOutcome =
  | { readonly _tag: "Measured"; readonly figures: CaseFigures }
  | { readonly _tag: "NotRun"; readonly reason: string }

const fixed = (value: number | null, digits: number) => (value === null ? "–" : value.toFixed(digits))
const verdict = (ok: boolean | null) => (ok === null ? "–" : ok ? "met" : "**missed**")

const title: Record<Backend, string> = {
  pg: "PostgreSQL",
  "pg-split": "PostgreSQL, the API and the workers in two copies (RUN=web, RUN=workers)",
  pglite: "PGlite"
}

export const renderCase = (backend: Backend, outcome: CaseOutcome): string => {
  if (outcome._tag === "NotRun") return `### ${title[backend]}\n\nnot run: ${outcome.reason}\n`
  const f = outcome.figures
  const ratio = f.fanOutSeconds === null ? null : f.fanOutSeconds / f.rawInsertSeconds
  const rows: Array<[string, string, string, string]> = [
    ["subscribers (n)", f.subscribers.toLocaleString("en"), "", ""],
    ["seeding n subscribers + n subscriptions, s", fixed(f.seedSeconds, 1), "", ""],
    ["raw insert of n email-shaped rows, s", fixed(f.rawInsertSeconds, 2), "", ""],
    ["fan-out (POST to n emails), s", fixed(f.fanOutSeconds, 2), "", ""],
    ["fan-out ÷ raw", fixed(ratio, 2), "≤ 2", verdict(ratio === null ? null : ratio <= 2)],
    [
      `POST /notifications during fan-out, p50 / p99 ms (${f.posts.answered202}/${f.posts.sent} answered 202)`,
      `${fixed(f.posts.p50Ms, 1)} / ${fixed(f.posts.p99Ms, 1)}`,
      "p99 < 50",
      verdict(f.posts.p99Ms === null ? null : f.posts.p99Ms < 50)
    ],
    [
      `delivery, emails/s (${f.delivered.toLocaleString("en")} distinct at the sink)`,
      fixed(f.deliveryPerSecond, 0),
      "> 2,000",
      verdict(f.deliveryPerSecond === null ? null : f.deliveryPerSecond > 2000)
    ],
    ["server peak RSS, MB", fixed(f.peakRssMb, 0), "< 300", verdict(f.peakRssMb === null ? null : f.peakRssMb < 300)]
  ]
  const table = [
    "| figure | measured | target | |",
    "|---|---:|---|---|",
    ...rows.map((cells) => `| ${cells.join(" | ")} |`)
  ].join("\n")
  const notes = [
    `raw rows' body ${f.rawBodyLength.toFixed(0)} chars on average, fan-out emails' ${fixed(f.fanOutBodyLength, 0)}`,
    `the sink received ${f.sinkRequests.toLocaleString("en")} requests for ${f.delivered.toLocaleString("en")} distinct emails`,
    ...f.notes
  ]
  return `### ${title[backend]}\n\n${table}\n\n${notes.map((note) => `- ${note}`).join("\n")}\n`
}
