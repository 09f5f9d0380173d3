import { Effect } from "effect"

const WIDTH = 30

/** A progress bar on stderr, redrawn in place when stderr is a terminal and printed every 10% otherwise. */
export const makeProgressBar = (total: number, label: string) => {
  const interactive = process.stderr.isTTY === true
  let lastDecile = -1
  return {
    update: (done: number) =>
      Effect.sync(() => {
        if (total <= 1) return
        const ratio = Math.min(1, done / total)
        if (interactive) {
          const filled = Math.round(ratio * WIDTH)
          process.stderr.write(`\r${label} [${"#".repeat(filled)}${".".repeat(WIDTH - filled)}] ${done}/${total}`)
          if (done >= total) process.stderr.write("\n")
          return
        }
        const decile = Math.floor(ratio * 10)
        if (decile !== lastDecile) {
          lastDecile = decile
          process.stderr.write(`${label}: ${done}/${total}\n`)
        }
      })
  }
}
