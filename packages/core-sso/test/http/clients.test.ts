import * as oauth from "oauth4webapi"
import * as client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signInThrough } from "../fixtures/browser"
import { openIdCodeFlow } from "../fixtures/openIdClient"
import { CLIENT_ID, CLIENT_SECRET, PASSWORD } from "../fixtures/publisherFlow"
import { startSsoHost } from "./server"
import type { SsoHost } from "./server"

const REDIRECT_URI = "https://client.example/auth/callback"

let server: SsoHost
let issuer: URL

beforeAll(async () => {
  server = await startSsoHost({
    issuerIsHost: true,
    bootstrap: {
      applications: [{
        name: "Stock client",
        home_uri: "https://client.example",
        redirect_uris: [REDIRECT_URI],
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        permissions: ["signin", "editor"]
      }],
      users: [{ email: "ada@example.com", name: "Ada Lovelace", password: PASSWORD, permissions: { "Stock client": ["signin", "editor"] } }]
    }
  })
  issuer = new URL(server.url)
})
afterAll(() => server?.close())

describe("openid-client", () => {
  it("discovers the provider, signs in with PKCE and a nonce, validates the id_token, reads userinfo and refreshes", async () => {
    const { config, nonce, tokens } = await openIdCodeFlow({
      baseUrl: server.url,
      issuer,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: REDIRECT_URI,
      email: "ada@example.com",
      password: PASSWORD,
      scope: "openid email profile"
    })
    const claims = tokens.claims()!
    expect(claims).toMatchObject({ iss: server.url, aud: CLIENT_ID, azp: CLIENT_ID, nonce, email: "ada@example.com" })
    expect(tokens.expires_in).toBe(7200)
    const userInfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
    expect(userInfo).toEqual({ sub: claims.sub, name: "Ada Lovelace", email: "ada@example.com" })
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect(refreshed.claims()?.sub).toBe(claims.sub)
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" })
  })

  it("a wrong nonce is caught by the client", async () => {
    const config = await client.discovery(issuer, CLIENT_ID, CLIENT_SECRET, undefined, { execute: [client.allowInsecureRequests] })
    const verifier = client.randomPKCECodeVerifier()
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: "openid",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      nonce: "the-nonce-sent",
      state: "s"
    })
    const callback = await signInThrough(server.url, authorizationUrl.href, "ada@example.com", PASSWORD)
    await expect(client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedNonce: "another-nonce",
      expectedState: "s"
    }).catch((error: { cause?: unknown }) => error.cause)).resolves.toMatchObject({ message: expect.stringContaining("\"nonce\"") })
  })
})

describe("oauth4webapi", () => {
  it("does the plain OAuth 2 flow against /token and reads /user.json", async () => {
    const options = { [oauth.allowInsecureRequests]: true }
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...options }))
    const oauthClient: oauth.Client = { client_id: CLIENT_ID }
    const clientAuth = oauth.ClientSecretBasic(CLIENT_SECRET)
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const authorizationUrl = new URL(as.authorization_endpoint!)
    authorizationUrl.search = new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256"
    }).toString()
    const callback = await signInThrough(server.url, authorizationUrl.href, "ada@example.com", PASSWORD)
    const params = oauth.validateAuthResponse(as, oauthClient, callback, state)
    const response = await oauth.authorizationCodeGrantRequest(as, oauthClient, clientAuth, params, REDIRECT_URI, verifier, options)
    const result = await oauth.processAuthorizationCodeResponse(as, oauthClient, response)
    expect(result.token_type).toBe("bearer")
    const user = await oauth.protectedResourceRequest(result.access_token, "GET", new URL("/user.json", issuer), undefined, undefined, options)
    expect(user.status).toBe(200)
    expect(await user.json()).toMatchObject({ user: { email: "ada@example.com", permissions: ["editor", "signin"] } })
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      oauthClient,
      await oauth.refreshTokenGrantRequest(as, oauthClient, clientAuth, result.refresh_token!, options)
    )
    expect(refreshed.access_token).not.toBe(result.access_token)
  })
})
