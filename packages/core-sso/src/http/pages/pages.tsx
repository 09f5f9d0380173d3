import { MIN_PASSWORD_LENGTH } from "../../services/Passwords"
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
  readonly notice?: string
}) => (
  <Layout title="Sign in">
    <h1>Sign in</h1>
    <ProblemSummary message={props.problem} />
    {props.notice === undefined ? null : <div class="notice" role="status">{props.notice}</div>}
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
    <p>
      <a href="/users/password/new">Forgot your password?</a>
    </p>
  </Layout>
)

export const SignOutForm = (props: { readonly csrfToken: string }) => (
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
    <p>
      <a href="/account">Your account and two-step verification</a>
    </p>
    <SignOutForm csrfToken={props.csrfToken} />
  </Layout>
)

const ReturnTo = (props: { readonly returnTo: string | undefined }) =>
  props.returnTo === undefined ? null : <input type="hidden" name="return_to" value={props.returnTo} />

const withReturnTo = (path: string, returnTo: string | undefined, extra: Record<string, string> = {}) => {
  const query = new URLSearchParams({ ...extra, ...(returnTo === undefined ? {} : { return_to: returnTo }) }).toString()
  return query === "" ? path : `${path}?${query}`
}

/** The second step of signing in: the code the user's app shows, or one of their recovery codes. */
export const SecondStepPage = (props: {
  readonly csrfToken: string
  readonly returnTo: string | undefined
  readonly recovery: boolean
  readonly problem?: string
}) => (
  <Layout title={props.recovery ? "Use a recovery code" : "Enter your code"}>
    <h1>{props.recovery ? "Use a recovery code" : "Enter your code"}</h1>
    <ProblemSummary message={props.problem} />
    <form method="post" action="/users/two_step">
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <ReturnTo returnTo={props.returnTo} />
      {props.recovery
        ? (
          <>
            <label for="code">Recovery code</label>
            <p class="note" id="code-hint">One of the codes you saved when you set up two-step verification. Each works once.</p>
            <input id="code" name="code" type="text" autocomplete="off" spellcheck={false} aria-describedby="code-hint" required />
          </>
        )
        : (
          <>
            <label for="code">Code from your authenticator app</label>
            <p class="note" id="code-hint">The 6 digits your app shows for this account now.</p>
            <input
              id="code"
              name="code"
              type="text"
              inputMode="numeric"
              autocomplete="one-time-code"
              aria-describedby="code-hint"
              required
            />
          </>
        )}
      <button type="submit">Continue</button>
    </form>
    <p>
      {props.recovery
        ? <a href={withReturnTo("/users/two_step", props.returnTo)}>Use the code from your app instead</a>
        : <a href={withReturnTo("/users/two_step", props.returnTo, { method: "recovery" })}>Use a recovery code instead</a>}
    </p>
  </Layout>
)

const dateText = (date: Date) => date.toISOString().slice(0, 10)

/** A new password and its repetition, as every form that sets one asks for them. */
export const NewPasswordFields = () => (
  <>
    <label for="new_password">New password</label>
    <p class="note" id="new-password-hint">At least {MIN_PASSWORD_LENGTH} characters.</p>
    <input
      id="new_password"
      name="new_password"
      type="password"
      autocomplete="new-password"
      aria-describedby="new-password-hint"
      required
    />
    <label for="confirm_password">New password again</label>
    <input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" required />
  </>
)

export const AccountPage = (props: {
  readonly name: string
  readonly email: string
  readonly csrfToken: string
  readonly twoStep: { readonly since: Date; readonly recoveryCodesLeft: number } | undefined
  readonly signIns: ReadonlyArray<{ readonly at: Date; readonly address: string; readonly secondStep: string }>
  readonly problem?: string | undefined
  readonly done?: boolean
}) => (
  <Layout title="Your account">
    <p>
      <a href="/">Home</a>
    </p>
    <h1>Your account</h1>
    <ProblemSummary message={props.problem} />
    {props.done === true ? <div class="notice" role="status">Your password is changed. Your other sessions have ended.</div> : null}
    <p>Signed in as {props.name} ({props.email}).</p>
    <h2>Change your password</h2>
    <form method="post" action="/account/password">
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <label for="current_password">Current password</label>
      <input id="current_password" name="current_password" type="password" autocomplete="current-password" required />
      <NewPasswordFields />
      <button type="submit">Change password</button>
    </form>
    <h2>Two-step verification</h2>
    {props.twoStep === undefined
      ? (
        <>
          <p>Two-step verification is off. With it on, signing in takes your password and a code from an app on your phone.</p>
          <p>
            <a href="/account/two_step">Set up two-step verification</a>
          </p>
        </>
      )
      : (
        <p>
          Two-step verification is on, since {dateText(props.twoStep.since)}. You have {props.twoStep.recoveryCodesLeft}{" "}
          unused recovery {props.twoStep.recoveryCodesLeft === 1 ? "code" : "codes"}. If you lose your phone and your
          recovery codes, ask an administrator to reset it.
        </p>
      )}
    <h2>Recent sign-ins</h2>
    {props.signIns.length === 0 ? <p>None yet.</p> : (
      <table>
        <caption class="visually-hidden">Your recent sign-ins, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When (UTC)</th>
            <th scope="col">From</th>
            <th scope="col">Second step</th>
          </tr>
        </thead>
        <tbody>
          {props.signIns.map((signIn, index) => (
            <tr key={index}>
              <td>{signIn.at.toISOString().replace("T", " ").slice(0, 19)}</td>
              <td>{signIn.address}</td>
              <td>{signIn.secondStep}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <SignOutForm csrfToken={props.csrfToken} />
  </Layout>
)

/** The secret in groups of four, as it is easiest to type into an app. */
const groupedSecret = (secret: string) => secret.replace(/=+$/, "").match(/.{1,4}/g)!.join(" ")

export const TwoStepSetUpPage = (props: {
  readonly csrfToken: string
  readonly returnTo: string | undefined
  readonly required: boolean
  readonly secret: string
  readonly qrSvg: string
  /** The session signed in a while ago: the password is asked for again. */
  readonly askPassword: boolean
  readonly problem?: string
}) => (
  <Layout title="Set up two-step verification">
    <h1>Set up two-step verification</h1>
    <ProblemSummary message={props.problem} />
    {props.required ? <p>Your account must use two-step verification. Set it up to continue.</p> : null}
    <ol>
      <li>Install an authenticator app on your phone, if you do not have one.</li>
      <li>
        In the app, add an account by scanning this QR code:
        <div class="qr" role="img" aria-label="QR code of your two-step verification key" dangerouslySetInnerHTML={{ __html: props.qrSvg }} />
        or by typing this key: <code class="secret">{groupedSecret(props.secret)}</code>
      </li>
      <li>Enter the 6-digit code the app shows.</li>
    </ol>
    <form method="post" action="/account/two_step">
      <input type="hidden" name="authenticity_token" value={props.csrfToken} />
      <ReturnTo returnTo={props.returnTo} />
      {props.askPassword
        ? (
          <>
            <label for="password">Your password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
          </>
        )
        : null}
      <label for="code">Code from your authenticator app</label>
      <input id="code" name="code" type="text" inputMode="numeric" autocomplete="one-time-code" required />
      <button type="submit">Turn on two-step verification</button>
    </form>
  </Layout>
)

export const RecoveryCodesPage = (props: { readonly codes: ReadonlyArray<string>; readonly continueTo: string }) => (
  <Layout title="Save your recovery codes">
    <h1>Two-step verification is on</h1>
    <h2>Save your recovery codes</h2>
    <p>
      If you lose your phone, each of these codes signs you in once instead of a code from the app. Keep them somewhere
      safe, such as a password manager. They are shown only now.
    </p>
    <ul class="codes">
      {props.codes.map((code) => <li key={code}><code>{code}</code></li>)}
    </ul>
    <p>
      <a href={props.continueTo}>I have saved my recovery codes: continue</a>
    </p>
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
