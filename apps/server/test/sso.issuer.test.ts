import * as client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "@civicstack/kit/testing"
import { openIdCodeFlow } from "../../../packages/core-sso/test/fixtures/openIdClient"
import {
  CLIENT_ID,
  CLIENT_SECRET,
  PASSWORD,
  publisherBootstrap,
  REDIRECT_URI
} from "../../../packages/core-sso/test/fixtures/publisherFlow"
import { startInProcessServer } from "./inProcessServer"
import { writeBootstrap } from "./sso/bootstrap"
import type { InProcessServer } from "./inProcessServer"

// The SSO is reached at 127.0.0.1 while the website, the base of the email links, is another host.
const PUBLIC_SITE_URL = "https://www.gov.example"

let server: InProcessServer
let issuer: string
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  bootstrap = await writeBootstrap(publisherBootstrap)
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  server = await startInProcessServer({
    PORT: String(port),
    SSO_ISSUER: `${issuer}/`,
    PUBLIC_SITE_URL,
    CIVICSTACK_BOOTSTRAP: bootstrap.file,
    SERVICES: "sso"
  })
})
afterAll(async () => {
  await server?.close()
  await bootstrap?.remove()
})

describe("SSO_ISSUER, apart from PUBLIC_SITE_URL", () => {
  it("is the issuer of discovery and of every endpoint there; the website appears nowhere", async () => {
    for (const path of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
      const metadata = (await (await fetch(`${server.url}${path}`)).json()) as Record<string, unknown>
      expect(metadata.issuer).toBe(issuer)
      expect(metadata.token_endpoint).toBe(`${issuer}/oauth/token`)
      expect(JSON.stringify(metadata)).not.toContain("gov.example")
    }
  })

  it("lets openid-client discover it, sign in with PKCE and a nonce, check the id_token and read userinfo", async () => {
    const { config, tokens } = await openIdCodeFlow({
      baseUrl: server.url,
      issuer: new URL(issuer),
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: REDIRECT_URI,
      email: "ada@example.com",
      password: PASSWORD,
      scope: "openid email"
    })
    expect(tokens.claims()).toMatchObject({ iss: issuer, aud: CLIENT_ID, email: "ada@example.com" })
    const userInfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)
    expect(userInfo).toMatchObject({ email: "ada@example.com" })
  })
})
