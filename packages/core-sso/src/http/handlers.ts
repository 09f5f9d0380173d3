import type * as HttpApi from "@effect/platform/HttpApi"
import { Layer } from "effect"
import type { SsoGroups } from "../api/SsoApi"
import { adminHandlers } from "./adminHandlers"
import { browserHandlers } from "./browserHandlers"
import { emailLinkHandlers } from "./emailLinkHandlers"
import { manageHandlers } from "./manageHandlers"
import { oauthHandlers } from "./oauthHandlers"

/**
 * The handlers of the SSO's endpoints, for an HttpApi made with `addSsoGroups` under the host's own identifier. Storage
 * failures are defects here: the host turns them into 503 or 500 answers.
 */
export const ssoHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, SsoGroups, E, R>
) => Layer.mergeAll(oauthHandlers(api), browserHandlers(api), adminHandlers(api), manageHandlers(api), emailLinkHandlers(api))
