import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"

/** An application's callback page on 127.0.0.1, where a sign-in ends: its URL and how to stop it. */
export const startClientApp = async () => {
  const server = Http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>Client</title><h1>Back at the client</h1>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    callbackUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/callback`,
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

export const newPage = async (browser: Browser) => (await browser.newContext({ bypassCSP: true, javaScriptEnabled: true })).newPage()

export const signInWithPassword = async (page: Page, email: string, password: string) => {
  await page.getByLabel("Email address").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
}

export const authorizeUrl = (serverUrl: string, clientId: string, callbackUrl: string) =>
  `${serverUrl}/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: callbackUrl,
    state: "browser-state"
  })}`
