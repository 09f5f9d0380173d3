import * as Fs from "node:fs"
import { chromium } from "playwright-core"

/** Debian's `chromium` package (never a downloaded browser); CHROMIUM_PATH names another build. */
const CANDIDATES = [process.env["CHROMIUM_PATH"], "/usr/lib/chromium/chromium", "/usr/bin/chromium"]

export const chromiumPath = () => {
  const found = CANDIDATES.find((path) => path !== undefined && Fs.existsSync(path))
  if (found === undefined) {
    throw new Error("No chromium found: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH")
  }
  return found
}

export const launchChromium = () =>
  chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] })
