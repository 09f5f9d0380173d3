/**
 * Draws the screenshots of the sign-on's pages that the core's README shows, from a server in this process on the
 * embedded database, in Debian's chromium:
 *
 *   node --conditions=@civicstack/source --import tsx apps/server/tools/ssoScreenshots.ts packages/core-sso/docs
 */
import * as Path from "node:path"
import { startInProcessServer } from "../test/inProcessServer"
import { authenticatorCode } from "../test/sso/authenticatorApp"
import { writeBootstrap } from "../test/sso/bootstrap"
import { launchChromium } from "../test/sso/chromium"
import { signInWithPassword } from "../test/sso/pages"

const directory = process.argv[2] ?? "packages/core-sso/docs"
const PASSWORD = "a password for the screenshots"
const SECRET = "KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU"

const bootstrap = await writeBootstrap({
  applications: [
    { name: "Publisher", description: "Publishes content", home_uri: "https://publisher.example", redirect_uris: ["https://publisher.example/auth/callback"], permissions: ["signin", "editor", "managing_editor"], push_updates: true },
    { name: "Whitehall", description: "Departments' news", home_uri: "https://whitehall.example", redirect_uris: ["https://whitehall.example/auth/callback"], permissions: ["signin", "gds_editor"], require_2sv: true }
  ],
  users: [
    { email: "root@example.com", name: "Rosa Root", password: PASSWORD, admin: true, otp_secret: SECRET, permissions: { Publisher: ["signin", "editor"], Whitehall: ["signin"] } },
    { email: "ada@example.com", name: "Ada Lovelace", password: PASSWORD, permissions: { Publisher: ["signin", "editor"] } },
    { email: "grace@example.com", name: "Grace Hopper", password: PASSWORD, role: "admin", otp_secret: SECRET, permissions: { Publisher: ["signin"] } },
    { email: "alan@example.com", name: "Alan Turing", password: PASSWORD, permissions: { Whitehall: ["signin", "gds_editor"] } }
  ]
})
const server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: bootstrap.file, SERVICES: "sso" })
const browser = await launchChromium()
try {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 800 } })).newPage()
  await page.goto(`${server.url}/`)
  await signInWithPassword(page, "root@example.com", PASSWORD)
  await page.getByLabel("Code from your authenticator app").fill(authenticatorCode(SECRET, Date.now()))
  await page.getByRole("button", { name: "Continue" }).click()
  await page.waitForSelector("h1:has-text('Your applications')")
  const shoot = (name: string) => page.screenshot({ path: Path.join(directory, `${name}.png`), fullPage: true })
  await shoot("home")
  await page.getByRole("link", { name: "Users", exact: true }).click()
  await shoot("users")
  await page.getByRole("link", { name: "Ada Lovelace" }).click()
  await shoot("user")
  await page.goto(`${server.url}/manage/applications`)
  await page.getByRole("link", { name: "Whitehall" }).click()
  await shoot("application")
  console.log(`Screenshots written to ${directory}`)
} finally {
  await browser.close()
  await server.close()
  await bootstrap.remove()
}
