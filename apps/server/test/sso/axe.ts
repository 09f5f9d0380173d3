import axe from "axe-core"
import type { Page } from "playwright-core"
import { expect } from "vitest"

/** axe-core on the page as it is; the pages' CSP allows no scripts, so the context bypasses it for the check only. */
export const expectAccessible = async (page: Page) => {
  await page.addScriptTag({ content: axe.source })
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run())
  expect(results.violations.map(({ help, id, nodes }) => ({ id, help, nodes: nodes.map((node) => node.html) }))).toEqual([])
}
