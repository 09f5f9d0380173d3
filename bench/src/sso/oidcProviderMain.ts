/**
 * oidc-provider 9 with its memory adapter, or with a PostgreSQL adapter when a database URL is given, one confidential
 * client and one fixed account, for the SSO bench. Before announcing itself it mints the access tokens for userinfo and
 * the pool of refresh tokens, each refresh token with a grant of its own, as an authorization code exchange would have
 * left them.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import Provider from "oidc-provider"
import LRU from "oidc-provider/lib/helpers/lru.js"
import MemoryAdapter from "oidc-provider/lib/adapters/memory_adapter.js"
import pg from "pg"
import { announceReady } from "./childServer"
import { createAdapterTable, postgresAdapter } from "./oidcProviderPgAdapter"

export interface OidcProviderDescription {
  readonly url: string
  readonly clientId: string
  readonly clientSecret: string
  readonly accessTokens: ReadonlyArray<string>
  readonly refreshTokens: ReadonlyArray<string>
}

const [accessTokenCount, refreshTokenCount] = process.argv.slice(2, 4).map(Number) as [number, number]
const databaseUrl = process.argv[4]

// The default memory adapter's store keeps the 1000 most recent entries, fewer than the tokens a run mints: the same
// adapter over a larger store of the same kind.
const memoryStore = new LRU({ maxSize: 10_000_000 })

async function chosenAdapter() {
  if (databaseUrl === undefined) return (model: string) => new MemoryAdapter(model, memoryStore)
  const pool = new pg.Pool({ connectionString: databaseUrl })
  await pool.query(createAdapterTable)
  return postgresAdapter(pool)
}

const clientId = "bench-client"
const clientSecret = "bench-client-secret-0123456789abcdef"
const accountId = "00000000-0000-4000-8000-000000000001"

const server = createServer()
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const provider = new Provider(url, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: ["https://client.example/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    token_endpoint_auth_method: "client_secret_post"
  }],
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  findAccount: (_context, id) => ({
    accountId: id,
    claims: () => ({ sub: id, name: "Bench User", email: "bench@example.com", email_verified: true })
  }),
  adapter: await chosenAdapter(),
  // Our server rotates every refresh token; oidc-provider's default rotates only public clients' or old ones.
  rotateRefreshToken: true
})
server.on("request", provider.callback())

const client = await provider.Client.find(clientId)
if (client === undefined) throw new Error("the bench client is not configured")

const newGrant = async () => {
  const grant = new provider.Grant({ accountId, clientId })
  grant.addOIDCScope("openid email profile offline_access")
  return grant.save()
}

const sharedGrantId = await newGrant()
const accessTokens: Array<string> = []
for (let index = 0; index < accessTokenCount; index++) {
  accessTokens.push(
    await new provider.AccessToken({ accountId, client, grantId: sharedGrantId, scope: "openid email profile", gty: "authorization_code" }).save()
  )
}

const refreshTokens: Array<string> = []
for (let index = 0; index < refreshTokenCount; index++) {
  const grantId = await newGrant()
  refreshTokens.push(
    await new provider.RefreshToken({
      accountId,
      client,
      grantId,
      scope: "email profile offline_access",
      gty: "authorization_code",
      authTime: Math.floor(Date.now() / 1000)
    }).save()
  )
}

const description: OidcProviderDescription = { url, clientId, clientSecret, accessTokens, refreshTokens }
announceReady(description)
process.once("SIGTERM", () => server.close(() => process.exit(0)))
