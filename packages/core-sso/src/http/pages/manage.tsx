import { USER_UPDATE_PERMISSION } from "../../domain/permissions"
import type { Application, SsoEvent, User } from "../../domain/records"
import { Layout } from "./layout"
import { ProblemSummary, SignOutForm } from "./pages"

/** A user as the users list shows them. */
export interface UserRow {
  readonly user: User
  readonly role: "superadmin" | "administrator" | "API user" | "user"
  readonly locked: boolean
  readonly twoStep: boolean
}

export interface UserFilters {
  readonly q: string
  readonly role: string
  readonly state: string
  readonly twoStep: string
}

const AdminLinks = (props: { readonly superadmin: boolean }) => (
  <nav aria-label="Administration">
    <ul>
      <li>
        <a href="/manage/users">Users</a>
      </li>
      <li>
        <a href="/manage/events">Event log</a>
      </li>
      {props.superadmin
        ? (
          <>
            <li>
              <a href="/manage/applications">Applications</a>
            </li>
            <li>
              <a href="/manage/api_users">API users</a>
            </li>
          </>
        )
        : null}
    </ul>
  </nav>
)

export const HomePage = (props: {
  readonly user: User
  readonly applications: ReadonlyArray<Application>
  readonly role: "superadmin" | "admin" | "user"
  readonly csrfToken: string
}) => (
  <Layout title="Home">
    <h1>Your applications</h1>
    <p>Signed in as {props.user.name} ({props.user.email}).</p>
    {props.applications.length === 0
      ? <p>You cannot use any application yet. Ask an administrator for access.</p>
      : (
        <ul>
          {props.applications.map((application) => (
            <li key={application.id}>
              <a href={application.homeUri}>{application.name}</a>
              {application.description === "" ? null : <span class="note"> – {application.description}</span>}
            </li>
          ))}
        </ul>
      )}
    <p>
      <a href="/account">Your account and two-step verification</a>
    </p>
    {props.role === "user" ? null : <AdminLinks superadmin={props.role === "superadmin"} />}
    <SignOutForm csrfToken={props.csrfToken} />
  </Layout>
)

const Select = (props: {
  readonly id: string
  readonly label: string
  readonly value: string
  readonly options: ReadonlyArray<readonly [string, string]>
}) => (
  <div>
    <label for={props.id}>{props.label}</label>
    <select id={props.id} name={props.id}>
      {props.options.map(([value, text]) => <option key={value} value={value} selected={value === props.value}>{text}</option>)}
    </select>
  </div>
)

const pageLink = (filters: UserFilters, page: number) =>
  `/manage/users?${new URLSearchParams({
    ...(filters.q === "" ? {} : { q: filters.q }),
    ...(filters.role === "" ? {} : { role: filters.role }),
    ...(filters.state === "" ? {} : { state: filters.state }),
    ...(filters.twoStep === "" ? {} : { two_step: filters.twoStep }),
    page: String(page)
  })}`

export const USER_STATES = ["active", "invited", "suspended", "locked"] as const

/** Whether a user can sign in, and if not why: suspended, locked, or invited and without a password yet. */
export const stateOf = (user: User, locked: boolean): (typeof USER_STATES)[number] =>
  user.suspendedAt !== null
    ? "suspended"
    : locked
    ? "locked"
    : user.passwordHash === null && !user.isApiUser
    ? "invited"
    : "active"

const STATE_TEXT = {
  active: "Active",
  invited: "Invited: no password chosen yet",
  suspended: "Suspended",
  locked: "Locked after wrong passwords or codes"
} as const

export const UsersPage = (props: {
  readonly rows: ReadonlyArray<UserRow>
  readonly filters: UserFilters
  readonly page: number
  readonly pages: number
  readonly total: number
}) => (
  <Layout title="Users" wide>
    <p>
      <a href="/">Home</a>
    </p>
    <h1>Users</h1>
    <p>
      <a href="/manage/users/new">Invite a user</a>
    </p>
    <form method="get" action="/manage/users" class="filters">
      <div>
        <label for="q">Name or email contains</label>
        <input id="q" name="q" type="search" value={props.filters.q} />
      </div>
      <Select
        id="role"
        label="Role"
        value={props.filters.role}
        options={[["", "Any"], ["superadmin", "Superadmin"], ["administrator", "Administrator"], ["user", "User"], ["api", "API user"]]}
      />
      <Select
        id="state"
        label="State"
        value={props.filters.state}
        options={[["", "Any"], ["active", "Active"], ["invited", "Invited"], ["suspended", "Suspended"], ["locked", "Locked"]]}
      />
      <Select
        id="two_step"
        label="Two-step verification"
        value={props.filters.twoStep}
        options={[["", "Any"], ["on", "On"], ["off", "Off"]]}
      />
      <button type="submit">Search</button>
    </form>
    <p role="status">
      {props.total === 0 ? "No users match." : `${props.total} ${props.total === 1 ? "user" : "users"}, page ${props.page} of ${props.pages}.`}
    </p>
    {props.rows.length === 0 ? null : (
      <table>
        <caption class="visually-hidden">Users</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">State</th>
            <th scope="col">Two-step</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(({ locked, role, twoStep, user }) => (
            <tr key={user.uid}>
              <td>
                <a href={`/manage/users/${encodeURIComponent(user.uid)}`}>{user.name}</a>
              </td>
              <td>{user.email}</td>
              <td>{role}</td>
              <td>{stateOf(user, locked)}</td>
              <td>{user.isApiUser ? "–" : twoStep ? "on" : "off"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    {props.pages <= 1 ? null : (
      <nav aria-label="Pages of users">
        {props.page > 1 ? <a href={pageLink(props.filters, props.page - 1)}>Previous page</a> : null}{" "}
        {props.page < props.pages ? <a href={pageLink(props.filters, props.page + 1)}>Next page</a> : null}
      </nav>
    )}
  </Layout>
)

const DONE: Record<string, string> = {
  permissions: "Permissions saved. The applications the user has used are told.",
  suspended: "The user is suspended: their tokens are revoked and their applications told to sign them out.",
  unsuspended: "The user can sign in again.",
  unlocked: "The account is unlocked.",
  two_step_reset: "Two-step verification is removed. The user sets it up again at their next sign-in if it is required of them.",
  invited: "The user is invited: an email with a link to choose their password is on its way. Grant their permissions here.",
  invitation_sent: "The invitation is sent again, with a new link. Earlier links still work until they expire."
}

const ActionForm = (props: {
  readonly uid: string
  readonly action: string
  readonly csrfToken: string
  readonly label: string
  readonly children?: preact.ComponentChildren
}) => (
  <form method="post" action={`/manage/users/${encodeURIComponent(props.uid)}/${props.action}`}>
    <input type="hidden" name="authenticity_token" value={props.csrfToken} />
    {props.children}
    <button type="submit" class="secondary">{props.label}</button>
  </form>
)

const actorText = (detail: SsoEvent["detail"]) => {
  const actor = detail["actor"] as { readonly kind?: string; readonly email?: string } | undefined
  return actor?.email ?? actor?.kind ?? ""
}

export const UserPage = (props: {
  readonly user: User
  readonly role: UserRow["role"]
  readonly locked: boolean
  readonly twoStep: boolean
  readonly permissions: Readonly<Record<string, ReadonlyArray<string>>>
  readonly applications: ReadonlyArray<Application>
  readonly events: ReadonlyArray<SsoEvent>
  readonly csrfToken: string
  readonly done?: string | undefined
  readonly problem?: string | undefined
}) => {
  const { user } = props
  const notice = props.done === undefined ? undefined : DONE[props.done]
  return (
    <Layout title={user.name} wide>
      <p>
        <a href="/manage/users">All users</a>
      </p>
      <h1>{user.name}</h1>
      <ProblemSummary message={props.problem} />
      {notice === undefined ? null : <div class="notice" role="status">{notice}</div>}
      <dl>
        <dt>Email</dt>
        <dd>{user.email}</dd>
        <dt>Role</dt>
        <dd>{props.role}</dd>
        <dt>State</dt>
        <dd>
          {user.suspendedAt !== null ? `Suspended: ${user.suspensionReason ?? ""}` : STATE_TEXT[stateOf(user, props.locked)]}
        </dd>
        {user.isApiUser ? null : (
          <>
            <dt>Two-step verification</dt>
            <dd>{props.twoStep ? "On" : "Off"}</dd>
          </>
        )}
      </dl>
      <h2>Permissions</h2>
      <form method="post" action={`/manage/users/${encodeURIComponent(user.uid)}/permissions`}>
        <input type="hidden" name="authenticity_token" value={props.csrfToken} />
        {props.applications.map((application) => (
          <fieldset key={application.id}>
            <legend>{application.name}</legend>
            {application.permissions.filter((permission) => permission !== USER_UPDATE_PERMISSION).map((permission) => {
              const id = `grant.${application.id}.${permission}`
              return (
                <div class="checkbox" key={permission}>
                  <input
                    type="checkbox"
                    id={id}
                    name={id}
                    value="on"
                    checked={props.permissions[application.name]?.includes(permission) ?? false}
                  />
                  <label for={id}>{permission}</label>
                </div>
              )
            })}
          </fieldset>
        ))}
        <button type="submit">Save permissions</button>
      </form>
      <h2>Account</h2>
      {user.suspendedAt === null
        ? (
          <ActionForm uid={user.uid} action="suspend" csrfToken={props.csrfToken} label="Suspend">
            <label for="reason">Reason for suspending</label>
            <input id="reason" name="reason" type="text" maxLength={500} />
          </ActionForm>
        )
        : <ActionForm uid={user.uid} action="unsuspend" csrfToken={props.csrfToken} label="Unsuspend" />}
      {stateOf(user, props.locked) === "invited"
        ? <ActionForm uid={user.uid} action="resend_invitation" csrfToken={props.csrfToken} label="Send the invitation again" />
        : null}
      {props.locked ? <ActionForm uid={user.uid} action="unlock" csrfToken={props.csrfToken} label="Unlock" /> : null}
      {props.twoStep
        ? <ActionForm uid={user.uid} action="reset_2sv" csrfToken={props.csrfToken} label="Reset two-step verification" />
        : null}
      <h2>Events</h2>
      {props.events.length === 0 ? <p>No events yet.</p> : (
        <table>
          <caption class="visually-hidden">Events of {user.name}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {props.events.map((event, index) => (
              <tr key={index}>
                <td>{event.at.toISOString().replace("T", " ").slice(0, 19)}</td>
                <td>{event.kind.replaceAll("_", " ")}</td>
                <td>{actorText(event.detail)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  )
}

export const ApplicationsPage = (props: { readonly applications: ReadonlyArray<Application> }) => (
  <Layout title="Applications" wide>
    <p>
      <a href="/">Home</a>
    </p>
    <h1>Applications</h1>
    <p>
      <a href="/manage/applications/new">Register an application</a>
    </p>
    <table>
      <caption class="visually-hidden">Applications</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Home</th>
          <th scope="col">Pushes</th>
          <th scope="col">Two-step required</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        {props.applications.map((application) => (
          <tr key={application.id}>
            <td>
              <a href={`/manage/applications/${encodeURIComponent(application.id)}`}>{application.name}</a>
            </td>
            <td>{application.homeUri}</td>
            <td>{application.pushUpdates ? application.pushFormat : "off"}</td>
            <td>{application.requireTwoStep ? "yes" : "no"}</td>
            <td>{application.retired ? "retired" : "live"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </Layout>
)

/** What the application form holds, as typed. */
export interface ApplicationForm {
  readonly name: string
  readonly description: string
  readonly homeUri: string
  readonly redirectUris: string
  readonly permissions: string
  readonly pushUpdates: boolean
  readonly pushFormat: string
  readonly requirePkce: boolean
  readonly requireTwoStep: boolean
}

const Checkbox = (props: { readonly name: string; readonly label: string; readonly checked: boolean }) => (
  <div class="checkbox">
    <input type="checkbox" id={props.name} name={props.name} value="on" checked={props.checked} />
    <label for={props.name}>{props.label}</label>
  </div>
)

export const ApplicationFormPage = (props: {
  readonly title: string
  readonly action: string
  readonly form: ApplicationForm
  readonly csrfToken: string
  readonly problem?: string | undefined
  readonly done?: string | undefined
  /** On an existing application: the form that rotates its secret. */
  readonly rotateAction?: string
}) => (
  <Layout title={props.title} wide>
    <p>
      <a href="/manage/applications">All applications</a>
    </p>
    <h1>{props.title}</h1>
    <ProblemSummary message={props.problem} />
    {props.done === undefined ? null : <div class="notice" role="status">{props.done}</div>}
    <form method="post" action={props.action}>
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <label for="name">Name</label>
      <input id="name" name="name" type="text" required maxLength={100} value={props.form.name} />
      <label for="description">Description</label>
      <input id="description" name="description" type="text" maxLength={1000} value={props.form.description} />
      <label for="home_uri">Home address</label>
      <input id="home_uri" name="home_uri" type="text" inputMode="url" required value={props.form.homeUri} />
      <label for="redirect_uris">Redirect addresses</label>
      <p class="note" id="redirect-hint">One per line: where users are sent back after signing in.</p>
      <textarea id="redirect_uris" name="redirect_uris" rows={3} aria-describedby="redirect-hint">{props.form.redirectUris}</textarea>
      <label for="permissions">Permissions</label>
      <p class="note" id="permissions-hint">Separated by spaces; every application has signin.</p>
      <input id="permissions" name="permissions" type="text" aria-describedby="permissions-hint" value={props.form.permissions} />
      <fieldset>
        <legend>Settings</legend>
        <Checkbox name="push_updates" label="Push changes of its users to it" checked={props.form.pushUpdates} />
        <label for="push_format">Push format</label>
        <select id="push_format" name="push_format">
          <option value="seed" selected={props.form.pushFormat !== "gds-sso"}>seed</option>
          <option value="gds-sso" selected={props.form.pushFormat === "gds-sso"}>gds-sso</option>
        </select>
        <Checkbox name="require_pkce" label="Require PKCE" checked={props.form.requirePkce} />
        <Checkbox name="require_2sv" label="Require two-step verification of its users" checked={props.form.requireTwoStep} />
      </fieldset>
      <button type="submit">Save</button>
    </form>
    {props.rotateAction === undefined ? null : (
      <>
        <h2>Client secret</h2>
        <p>A new secret stops the old one at once: give the new one to the application first.</p>
        <form method="post" action={props.rotateAction}>
          <input type="hidden" name="authenticity_token" value={props.csrfToken} />
          <button type="submit" class="secondary">Make a new client secret</button>
        </form>
      </>
    )}
  </Layout>
)

export const CredentialsPage = (props: {
  readonly application: Application
  readonly clientId?: string
  readonly clientSecret: string
}) => (
  <Layout title={`Credentials of ${props.application.name}`} wide>
    <h1>Credentials of {props.application.name}</h1>
    <p>They are shown only now: copy them into the application's settings.</p>
    <dl>
      {props.clientId === undefined ? null : (
        <>
          <dt>client_id</dt>
          <dd>
            <code>{props.clientId}</code>
          </dd>
        </>
      )}
      <dt>client_secret</dt>
      <dd>
        <code>{props.clientSecret}</code>
      </dd>
    </dl>
    <p>
      <a href={`/manage/applications/${encodeURIComponent(props.application.id)}`}>Back to {props.application.name}</a>
    </p>
  </Layout>
)

export const ApiUsersPage = (props: {
  readonly users: ReadonlyArray<{ readonly user: User; readonly liveTokens: number }>
  readonly csrfToken: string
  readonly problem?: string | undefined
  readonly form?: { readonly name: string; readonly email: string }
}) => (
  <Layout title="API users" wide>
    <p>
      <a href="/">Home</a>
    </p>
    <h1>API users</h1>
    <ProblemSummary message={props.problem} />
    <p>API users are the other services and scripts: they hold tokens issued in advance and never sign in.</p>
    {props.users.length === 0 ? <p>No API users yet.</p> : (
      <table>
        <caption class="visually-hidden">API users</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Live tokens</th>
          </tr>
        </thead>
        <tbody>
          {props.users.map(({ liveTokens, user }) => (
            <tr key={user.uid}>
              <td>
                <a href={`/manage/api_users/${encodeURIComponent(user.uid)}`}>{user.name}</a>
              </td>
              <td>{user.email}</td>
              <td>{liveTokens}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <h2>Create an API user</h2>
    <form method="post" action="/manage/api_users">
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <label for="name">Name</label>
      <input id="name" name="name" type="text" required maxLength={200} value={props.form?.name ?? ""} />
      <label for="email">Email address</label>
      <input id="email" name="email" type="email" required value={props.form?.email ?? ""} />
      <button type="submit">Create API user</button>
    </form>
  </Layout>
)

export interface TokenRow {
  readonly id: string
  readonly applicationName: string
  readonly createdAt: Date
  readonly expiresAt: Date
  readonly state: "live" | "expired" | "revoked"
}

const day = (date: Date) => date.toISOString().slice(0, 10)

export const ApiUserPage = (props: {
  readonly user: User
  readonly tokens: ReadonlyArray<TokenRow>
  readonly applications: ReadonlyArray<Application>
  readonly csrfToken: string
  readonly issued?: { readonly token: string; readonly applicationName: string; readonly expiresAt: Date } | undefined
  readonly notice?: string | undefined
  readonly problem?: string | undefined
}) => (
  <Layout title={props.user.name} wide>
    <p>
      <a href="/manage/api_users">All API users</a>
    </p>
    <h1>{props.user.name}</h1>
    <ProblemSummary message={props.problem} />
    {props.notice === undefined ? null : <div class="notice" role="status">{props.notice}</div>}
    {props.issued === undefined ? null : (
      <div class="notice" role="status">
        <p>
          A token for {props.issued.applicationName}, valid until {day(props.issued.expiresAt)}. It is shown only now:
        </p>
        <p>
          <code>{props.issued.token}</code>
        </p>
      </div>
    )}
    <p>
      {props.user.email}. Its permissions on each application are set on <a href={`/manage/users/${encodeURIComponent(props.user.uid)}`}>its user page</a>.
    </p>
    <h2>Tokens</h2>
    {props.tokens.length === 0 ? <p>No tokens yet.</p> : (
      <table>
        <caption class="visually-hidden">Tokens of {props.user.name}</caption>
        <thead>
          <tr>
            <th scope="col">Application</th>
            <th scope="col">Issued</th>
            <th scope="col">Expires</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="visually-hidden">Revoke</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.tokens.map((token) => (
            <tr key={token.id}>
              <td>{token.applicationName}</td>
              <td>{day(token.createdAt)}</td>
              <td>{day(token.expiresAt)}</td>
              <td>{token.state}</td>
              <td>
                {token.state === "live"
                  ? (
                    <form method="post" action={`/manage/api_users/${encodeURIComponent(props.user.uid)}/tokens/${encodeURIComponent(token.id)}/revoke`}>
                      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
                      <button type="submit" class="secondary" aria-label={`Revoke the token for ${token.applicationName} issued ${day(token.createdAt)}`}>
                        Revoke
                      </button>
                    </form>
                  )
                  : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <h2>Issue a token</h2>
    <form method="post" action={`/manage/api_users/${encodeURIComponent(props.user.uid)}/tokens`}>
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <label for="application">Application</label>
      <select id="application" name="application">
        {props.applications.map((application) => <option key={application.id} value={application.name}>{application.name}</option>)}
      </select>
      <label for="expires_in_days">Valid for (days)</label>
      <input id="expires_in_days" name="expires_in_days" type="text" inputMode="numeric" value="730" />
      <button type="submit">Issue token</button>
    </form>
  </Layout>
)

/** An event as the log shows it: with the user's email and the application's name where there are. */
export interface EventRow {
  readonly event: SsoEvent
  readonly userEmail: string | undefined
  readonly applicationName: string | undefined
}

export const EventsPage = (props: {
  readonly rows: ReadonlyArray<EventRow>
  readonly filters: { readonly user: string; readonly kind: string; readonly from: string; readonly to: string }
  readonly problem?: string | undefined
  readonly limit: number
}) => (
  <Layout title="Event log" wide>
    <p>
      <a href="/">Home</a>
    </p>
    <h1>Event log</h1>
    <ProblemSummary message={props.problem} />
    <form method="get" action="/manage/events" class="filters">
      <div>
        <label for="user">User's email</label>
        <input id="user" name="user" type="search" value={props.filters.user} />
      </div>
      <div>
        <label for="kind">Kind</label>
        <input id="kind" name="kind" type="search" value={props.filters.kind} />
      </div>
      <div>
        <label for="from">From (YYYY-MM-DD)</label>
        <input id="from" name="from" type="text" inputMode="numeric" value={props.filters.from} />
      </div>
      <div>
        <label for="to">To (YYYY-MM-DD)</label>
        <input id="to" name="to" type="text" inputMode="numeric" value={props.filters.to} />
      </div>
      <button type="submit">Filter</button>
    </form>
    <p role="status">
      {props.rows.length === 0
        ? "No events match."
        : props.rows.length === props.limit
        ? `The newest ${props.limit} events that match.`
        : `${props.rows.length} ${props.rows.length === 1 ? "event" : "events"}.`}
    </p>
    {props.rows.length === 0 ? null : (
      <table>
        <caption class="visually-hidden">Events, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When (UTC)</th>
            <th scope="col">What</th>
            <th scope="col">User</th>
            <th scope="col">Application</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(({ applicationName, event, userEmail }, index) => (
            <tr key={index}>
              <td>{event.at.toISOString().replace("T", " ").slice(0, 19)}</td>
              <td>{event.kind.replaceAll("_", " ")}</td>
              <td>{userEmail ?? ""}</td>
              <td>{applicationName ?? ""}</td>
              <td>{actorText(event.detail)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </Layout>
)
