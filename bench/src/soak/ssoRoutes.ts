import { benchApplication } from "../sso/bootstrap"
import type { RouteLoad } from "./routeLoad"

/** `GET /user.json` with the users' API tokens in rotation. */
export const userJson = (apiTokens: ReadonlyArray<string>, connections: number): RouteLoad<void> => {
  let sent = 0
  return {
    route: "user.json",
    connections,
    next: () => {
      const token = apiTokens[sent % apiTokens.length]!
      sent += 1
      return { request: { method: "GET", path: "/user.json", headers: { authorization: `Bearer ${token}` } }, tag: undefined }
    }
  }
}

export interface RefreshLoad extends RouteLoad<void> {
  /** Chains ended by an answer without a new refresh token. */
  readonly brokenChains: () => number
}

/**
 * `POST /oauth/token` with `grant_type=refresh_token`. Refresh tokens rotate and a used one is refused, so each
 * request takes the newest token of one of the chains in `heads` (one authorization code flow each), and its answer's
 * refresh token goes back as that chain's new head. With more chains than connections, a request always finds one.
 */
export const refreshGrants = (heads: ReadonlyArray<string>, connections: number): RefreshLoad => {
  const ready = [...heads]
  let broken = 0
  return {
    route: "refresh",
    connections,
    next: () => {
      // when every chain is broken the request is sent anyway, and its 400 shows in the figures
      const refreshToken = ready.shift() ?? "no-chain-left"
      const body = new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: refreshToken,
        client_id: benchApplication.clientId,
        client_secret: benchApplication.clientSecret
      }).toString()
      return {
        request: { method: "POST", path: "/oauth/token", headers: { "content-type": "application/x-www-form-urlencoded" }, body },
        tag: undefined
      }
    },
    answered: (status, body) => {
      const next = status === 200 ? (JSON.parse(body) as { refresh_token?: unknown }).refresh_token : undefined
      if (typeof next === "string") ready.push(next)
      else broken += 1
    },
    brokenChains: () => broken
  }
}
