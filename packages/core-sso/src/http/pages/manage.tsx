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

const AdminLinks = () => (
  <nav aria-label="Administration">
    <ul>
      <li>
        <a href="/manage/users">Users</a>
      </li>
    </ul>
  </nav>
)

export const HomePage = (props: {
  readonly user: User
  readonly applications: ReadonlyArray<Application>
  readonly administrator: boolean
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
    {props.administrator ? <AdminLinks /> : null}
    <SignOutForm csrfToken={props.csrfToken} />
  </Layout>
)

const Select = (props: {
  readonly id: string
  readonly label: string
  readonly value: string
  readonly options: ReadonlyArray<readonly [string, string]>
}) => (
  <>
    <label for={props.id}>{props.label}</label>
    <select id={props.id} name={props.id}>
      {props.options.map(([value, text]) => <option key={value} value={value} selected={value === props.value}>{text}</option>)}
    </select>
  </>
)

const pageLink = (filters: UserFilters, page: number) =>
  `/manage/users?${new URLSearchParams({
    ...(filters.q === "" ? {} : { q: filters.q }),
    ...(filters.role === "" ? {} : { role: filters.role }),
    ...(filters.state === "" ? {} : { state: filters.state }),
    ...(filters.twoStep === "" ? {} : { two_step: filters.twoStep }),
    page: String(page)
  })}`

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
    <form method="get" action="/manage/users" class="filters">
      <label for="q">Name or email contains</label>
      <input id="q" name="q" type="search" value={props.filters.q} />
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
        options={[["", "Any"], ["active", "Active"], ["suspended", "Suspended"], ["locked", "Locked"]]}
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
              <td>{user.suspendedAt !== null ? "suspended" : locked ? "locked" : "active"}</td>
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
  two_step_reset: "Two-step verification is removed. The user sets it up again at their next sign-in if it is required of them."
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
          {user.suspendedAt !== null
            ? `Suspended: ${user.suspensionReason ?? ""}`
            : props.locked
            ? "Locked after wrong passwords or codes"
            : "Active"}
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
            {application.permissions.map((permission) => {
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
