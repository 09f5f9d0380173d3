import { writeBootstrap } from "./sso/bootstrap"

/** An API token of a user with `signin` on `link-checker-api`, ensured by `linkcheckCallerBootstrap`. */
export const LINKCHECK_TOKEN = "1c1c1c1c1c1c1c1c2d2d2d2d2d2d2d2d"

/** A token of a user the SSO knows who has no `signin` on `link-checker-api`: refused with 403. */
export const NO_SIGNIN_TOKEN = "3e3e3e3e3e3e3e3e4f4f4f4f4f4f4f4f"

/** A second caller with `signin`, who must not see the first one's batches. */
export const OTHER_LINKCHECK_TOKEN = "0a0a0a0a0a0a0a0a1b1b1b1b1b1b1b1b"

/** A caller with `signin` and `admin` on `link-checker-api`: sees every caller's batches. */
export const LINKCHECK_ADMIN_TOKEN = "2c2c2c2c2c2c2c2c3d3d3d3d3d3d3d3d"

/** The header every request to the link checking API carries. */
export const asLinkcheckCaller = { authorization: `Bearer ${LINKCHECK_TOKEN}` } as const

/** A bootstrap file with the link checking API's caller; pass its `file` as `CIVICSTACK_BOOTSTRAP`. */
export const linkcheckCallerBootstrap = () =>
  writeBootstrap({
    users: [
      { email: "links@example.com", name: "Link checks", api_user: true, permissions: { "link-checker-api": ["signin"] } },
      { email: "nosignin@example.com", name: "No sign-in", api_user: true },
      { email: "other-links@example.com", name: "Other link checks", api_user: true, permissions: { "link-checker-api": ["signin"] } },
      {
        email: "links-admin@example.com",
        name: "Link check admin",
        api_user: true,
        permissions: { "link-checker-api": ["signin", "admin"] }
      }
    ],
    api_tokens: [
      { user: "links@example.com", application: "link-checker-api", token: LINKCHECK_TOKEN },
      { user: "nosignin@example.com", application: "link-checker-api", token: NO_SIGNIN_TOKEN },
      { user: "other-links@example.com", application: "link-checker-api", token: OTHER_LINKCHECK_TOKEN },
      { user: "links-admin@example.com", application: "link-checker-api", token: LINKCHECK_ADMIN_TOKEN }
    ]
  })

/** `fetch` as the link checking API's caller: with `asLinkcheckCaller`'s token unless `init` sends its own. */
export const linkcheckFetch = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { ...asLinkcheckCaller, ...(init.headers as Record<string, string> | undefined) } })
