import type * as HttpApi from "@effect/platform/HttpApi"
import { Layer } from "effect"
import type { AdminGroup } from "../api/admin"
import type { BrowserGroup, OAuthGroup } from "../api/SsoApi"
import { adminHandlers } from "./adminHandlers"
import { browserHandlers } from "./browserHandlers"
import { oauthHandlers } from "./oauthHandlers"

/**
 * The handlers of the SSO's endpoints, for an HttpApi made of `OAuthGroup`, `BrowserGroup` and `AdminGroup` under the host's own
 * identifier. Storage failures are defects here: the host turns them into 503 or 500 answers.
 */
export const ssoHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, typeof OAuthGroup | typeof BrowserGroup | typeof AdminGroup, E, R>
) => Layer.mergeAll(oauthHandlers(api), browserHandlers(api), adminHandlers(api))
