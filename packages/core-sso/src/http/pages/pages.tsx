import { Layout } from "./layout"

export const ProblemSummary = (props: { readonly message: string | undefined }) =>
  props.message === undefined ? null : (
    <div class="problem" role="alert" tabIndex={-1}>
      <h2>There is a problem</h2>
      <p>{props.message}</p>
    </div>
  )

export const SignInPage = (props: {
  readonly csrfToken: string
  readonly returnTo: string | undefined
  readonly applicationName: string | undefined
  readonly email?: string
  readonly problem?: string
}) => (
  <Layout title="Sign in">
    <h1>Sign in</h1>
    <ProblemSummary message={props.problem} />
    {props.applicationName === undefined ? null : <p class="note">to continue to {props.applicationName}</p>}
    <form method="post" action="/users/sign_in">
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      {props.returnTo === undefined ? null : <input type="hidden" name="return_to" value={props.returnTo} />}
      <label for="email">Email address</label>
      <input id="email" name="email" type="email" autocomplete="username" required value={props.email ?? ""} />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      <button type="submit">Sign in</button>
    </form>
  </Layout>
)

const SignOutForm = (props: { readonly csrfToken: string }) => (
  <form method="post" action="/users/sign_out">
    <input type="hidden" name="authenticity_token" value={props.csrfToken} />
    <button type="submit" class="secondary">Sign out</button>
  </form>
)

export const SignedInPage = (props: { readonly name: string; readonly email: string; readonly csrfToken: string }) => (
  <Layout title="Signed in">
    <h1>You are signed in</h1>
    <p>
      Signed in as {props.name} ({props.email}). Go back to the application you were using, or sign out of every
      application here.
    </p>
    <SignOutForm csrfToken={props.csrfToken} />
  </Layout>
)

export const SignedOutPage = () => (
  <Layout title="Signed out">
    <h1>You have signed out</h1>
    <p>You are signed out of the applications that use this sign-on.</p>
    <p>
      <a href="/users/sign_in">Sign in again</a>
    </p>
  </Layout>
)

export const NoAccessPage = (props: {
  readonly applicationName: string
  readonly reason: string
  readonly csrfToken: string
}) => (
  <Layout title="You do not have access">
    <h1>You do not have access to {props.applicationName}</h1>
    <p>{props.reason}.</p>
    <p>If you need to use {props.applicationName}, ask an administrator to give you access.</p>
    <SignOutForm csrfToken={props.csrfToken} />
  </Layout>
)

export const ErrorPage = (props: { readonly title: string; readonly message: string }) => (
  <Layout title={props.title}>
    <h1>{props.title}</h1>
    <p>{props.message}</p>
    <p class="note">Go back to the application you came from and try again. If this keeps happening, tell its team.</p>
  </Layout>
)
