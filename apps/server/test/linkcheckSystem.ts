import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { startFixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import type { FixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import { linkcheckCallerBootstrap } from "./linkcheckCaller"

export interface LinkcheckSystemSetup {
  /** The bootstrap file with the link checking API's caller, for the servers' `CIVICSTACK_BOOTSTRAP`. */
  readonly caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
  /** The fixture websites on 127.0.0.1. */
  readonly fleet: FixtureFleet
  /** A folder for the servers' data directories. */
  readonly scratch: string
}

/**
 * What a link checking system test file starts before its tests and removes after them. Read its fields inside the
 * tests: they are set once `beforeAll` has run.
 */
export const linkcheckSystemSetup = (scratchPrefix: string): LinkcheckSystemSetup => {
  const setup: { -readonly [K in keyof LinkcheckSystemSetup]?: LinkcheckSystemSetup[K] } = {}
  beforeAll(async () => {
    setup.caller = await linkcheckCallerBootstrap()
    setup.fleet = await startFixtureFleet()
    setup.scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), scratchPrefix))
  })
  afterAll(async () => {
    await setup.caller?.remove()
    await setup.fleet?.close()
    if (setup.scratch !== undefined) await Fs.rm(setup.scratch, { recursive: true, force: true })
  })
  return setup as LinkcheckSystemSetup
}
