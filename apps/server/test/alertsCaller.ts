import { writeBootstrap } from "./sso/bootstrap"

/** An API token of a user with `signin` on `email-alert-api`, ensured by `alertsCallerBootstrap`. */
export const ALERTS_TOKEN = "5a5a5a5a5a5a5a5a6b6b6b6b6b6b6b6b"

/** A token the SSO accepts, of a user without `signin` on `email-alert-api`: refused with 403. */
export const NO_ALERTS_TOKEN = "7c7c7c7c7c7c7c7c8d8d8d8d8d8d8d8d"

/** A second caller with `signin` on `email-alert-api`, whose requests count apart from the first's. */
export const OTHER_ALERTS_TOKEN = "4e4e4e4e4e4e4e4e5f5f5f5f5f5f5f5f"

/** A bootstrap file with the email alert API's caller; pass its `file` as `CIVICSTACK_BOOTSTRAP`. */
export const alertsCallerBootstrap = () =>
  writeBootstrap({
    users: [
      { email: "publisher@example.com", name: "Publisher", api_user: true, permissions: { "email-alert-api": ["signin"] } },
      { email: "other@example.com", name: "Other", api_user: true },
      { email: "second-site@example.com", name: "Second site", api_user: true, permissions: { "email-alert-api": ["signin"] } }
    ],
    api_tokens: [
      { user: "publisher@example.com", application: "email-alert-api", token: ALERTS_TOKEN },
      { user: "other@example.com", application: "email-alert-api", token: NO_ALERTS_TOKEN },
      { user: "second-site@example.com", application: "email-alert-api", token: OTHER_ALERTS_TOKEN }
    ]
  })

/** `fetch` as the email alert API's caller, with a JSON body when one is given. */
export const alertsFetch = (url: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
  fetch(url, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${init.token ?? ALERTS_TOKEN}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
