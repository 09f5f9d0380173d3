import { Cron, Option } from "effect"

const SECOND = 1000
/** How far back a latest slot is looked for: longer than any gap between slots of a cron that has slots at all. */
const MAX_LOOK_BACK_SECONDS = 2 ** 31

/** The first slot of `cron` strictly after `millis` (`Cron.next` starts from the whole second). */
export const nextSlot = (cron: Cron.Cron, millis: number): Date => Cron.next(cron, millis)

/**
 * The latest slot of `cron` at or before `now`, if there is one within the look-back.
 *
 * `Cron.prev` of effect 3.22 throws for day-of-week expressions such as "30 8 * * 6", so this asks only `Cron.next`
 * (monotone in its start): it doubles the look-back until some slot lies within it, then halves the gap between a
 * start whose next slot is due and one whose next slot is not, about 2 * log2(look-back in seconds) steps in all.
 */
export const latestSlot = (cron: Cron.Cron, now: number): Option.Option<Date> => {
  const lastWholeSecond = Math.floor(now / SECOND) * SECOND
  const isDue = (from: number) => nextSlot(cron, from).getTime() <= lastWholeSecond

  let lookBackSeconds = 1
  while (!isDue(lastWholeSecond - lookBackSeconds * SECOND)) {
    if (lookBackSeconds >= MAX_LOOK_BACK_SECONDS) return Option.none()
    lookBackSeconds *= 2
  }
  // the next slot after `dueFrom` is due; the next one after `notDueFrom` is not
  let dueFrom = lastWholeSecond - lookBackSeconds * SECOND
  let notDueFrom = lastWholeSecond
  while (notDueFrom - dueFrom > SECOND) {
    const middle = dueFrom + Math.floor((notDueFrom - dueFrom) / SECOND / 2) * SECOND
    if (isDue(middle)) dueFrom = middle
    else notDueFrom = middle
  }
  return Option.some(nextSlot(cron, dueFrom))
}
