import { Layout } from "./layout"
import { NewPasswordFields, ProblemSummary } from "./pages"

/** "Forgot your password?": the address to send a reset link to. */
export const ForgotPasswordPage = (props: { readonly csrfToken: string; readonly email?: string; readonly problem?: string }) => (
  <Layout title="Reset your password">
    <p>
      <a href="/users/sign_in">Back to sign in</a>
    </p>
    <h1>Reset your password</h1>
    <ProblemSummary message={props.problem} />
    <p>Enter the email address of your account. We will send it a link to choose a new password.</p>
    <form method="post" action="/users/password">
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <label for="email">Email address</label>
      <input id="email" name="email" type="email" autocomplete="username" required value={props.email ?? ""} />
      <button type="submit">Send the link</button>
    </form>
  </Layout>
)

/** What everyone who asks for a reset is told, whether the address is a user's or not. */
export const ResetRequestedPage = (props: { readonly lifetime: string }) => (
  <Layout title="Check your email">
    <h1>Check your email</h1>
    <div class="notice" role="status">
      If the address you entered belongs to an account, we have sent it a link to choose a new password.
    </div>
    <p>The link works once, for {props.lifetime}. If no email arrives within a few minutes, check your spam folder or ask again.</p>
    <p>
      <a href="/users/sign_in">Back to sign in</a>
    </p>
  </Layout>
)

/** The page an emailed link opens: a first password for an invited user, a new one after a reset. */
export const ChoosePasswordPage = (props: {
  readonly invitation: boolean
  readonly email: string
  readonly token: string
  readonly csrfToken: string
  readonly problem?: string
}) => {
  const title = props.invitation ? "Choose your password" : "Choose a new password"
  return (
    <Layout title={title}>
      <h1>{title}</h1>
      <ProblemSummary message={props.problem} />
      <p>For the account {props.email}.</p>
      <form method="post" action="/users/password/edit">
        <input type="hidden" name="authenticity_token" value={props.csrfToken} />
        <input type="hidden" name="token" value={props.token} />
        <input type="email" name="username" autocomplete="username" value={props.email} hidden readOnly />
        <NewPasswordFields />
        <button type="submit">{props.invitation ? "Set my password" : "Change my password"}</button>
      </form>
    </Layout>
  )
}

const LINK_PROBLEMS = {
  used: {
    title: "This link has already been used",
    message: "Each link works once, and a link ends when the account's password is set by another way."
  },
  expired: { title: "This link has expired", message: "Links from our emails work for a limited time." },
  unknown: { title: "This link does not work", message: "It may have been copied incompletely, or it is not one of ours." }
} as const

/** Why an emailed link cannot be used, and what to do instead. */
export const LinkProblemPage = (props: { readonly reason: keyof typeof LINK_PROBLEMS }) => (
  <Layout title={LINK_PROBLEMS[props.reason].title}>
    <h1>{LINK_PROBLEMS[props.reason].title}</h1>
    <p>{LINK_PROBLEMS[props.reason].message}</p>
    <p>
      If you still need to choose a password, <a href="/users/password/new">ask for a new link</a>. If you were invited
      and your invitation has expired, ask your administrator to send it again. If you have chosen your password,{" "}
      <a href="/users/sign_in">sign in</a>.
    </p>
  </Layout>
)

/** An administrator's form to invite a user: the invitation asks them to choose a password. */
export const InvitePage = (props: {
  readonly csrfToken: string
  readonly lifetime: string
  readonly name?: string
  readonly email?: string
  readonly problem?: string
}) => (
  <Layout title="Invite a user">
    <p>
      <a href="/manage/users">All users</a>
    </p>
    <h1>Invite a user</h1>
    <ProblemSummary message={props.problem} />
    <p>They get an email with a link to choose their password, which works once, for {props.lifetime}.</p>
    <form method="post" action="/manage/users">
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <label for="name">Name</label>
      <input id="name" name="name" type="text" autocomplete="off" required maxLength={200} value={props.name ?? ""} />
      <label for="email">Email address</label>
      <input id="email" name="email" type="email" autocomplete="off" required value={props.email ?? ""} />
      <button type="submit">Send the invitation</button>
    </form>
  </Layout>
)
