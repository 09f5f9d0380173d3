import type { ComponentChildren } from "preact"
import { renderToString } from "preact-render-to-string"
import { createHash } from "node:crypto"

const STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5; }
body { margin: 0; background: #f3f2f1; color: #0b0c0c; }
header { background: #0b0c0c; color: #ffffff; padding: 0.75rem 1.5rem; font-weight: 700; }
main { max-width: 30rem; margin: 2rem auto; background: #ffffff; padding: 1.5rem 2rem 2rem; border-top: 5px solid #1d70b8; }
h1 { font-size: 1.75rem; margin: 0 0 1rem; }
label { display: block; font-weight: 700; margin: 1rem 0 0.25rem; }
main.wide { max-width: 60rem; }
input[type=email], input[type=password], input[type=text], input[type=search], select, textarea { box-sizing: border-box; width: 100%; font: inherit; padding: 0.4rem; border: 2px solid #0b0c0c; }
button { margin-top: 1.5rem; font: inherit; font-weight: 700; padding: 0.5rem 1rem; color: #ffffff; background: #00703c; border: 0; box-shadow: 0 2px 0 #002d18; cursor: pointer; }
button.secondary { background: #505a5f; box-shadow: 0 2px 0 #222222; }
:focus-visible { outline: 3px solid #ffdd00; outline-offset: 0; box-shadow: 0 0 0 5px #0b0c0c; }
.problem { border: 4px solid #d4351c; padding: 0.75rem 1rem; margin-bottom: 1rem; }
.problem h2 { font-size: 1.1rem; margin: 0 0 0.25rem; }
.note { color: #484949; }
a { color: #1d70b8; }
h2 { font-size: 1.25rem; margin: 1.5rem 0 0.5rem; }
.qr svg { display: block; width: 12rem; height: 12rem; margin: 0.75rem 0; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 1.05rem; }
.secret { word-spacing: 0.3rem; }
.codes { columns: 2; padding-left: 1.25rem; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
th, td { text-align: left; padding: 0.4rem 0.5rem; border-bottom: 1px solid #b1b4b6; vertical-align: top; }
fieldset { border: 0; padding: 0; margin: 1rem 0; }
legend { font-weight: 700; font-size: 1.1rem; }
.checkbox { display: flex; align-items: center; gap: 0.5rem; margin: 0.25rem 0; }
.checkbox label { display: inline; font-weight: 400; margin: 0; }
.checkbox input { width: 1.25rem; height: 1.25rem; margin: 0; }
.filters { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: 0 1rem; align-items: end; }
.filters button { margin-top: 0.5rem; }
.filters label { margin-top: 0.5rem; }
.notice { border-left: 5px solid #00703c; padding: 0.5rem 1rem; margin-bottom: 1rem; background: #f3f2f1; }
dt { font-weight: 700; }
dd { margin: 0 0 0.5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`

const STYLE_HASH = `'sha256-${createHash("sha256").update(STYLE, "utf8").digest("base64")}'`

/**
 * The pages' Content-Security-Policy: nothing but their own inline style (by hash) and forms posted to this
 * origin, plus `formTargets`: a form submission's redirects are checked against `form-action` too, and sign-in ends
 * with a redirect to the application.
 */
export const contentSecurityPolicy = (formTargets: ReadonlyArray<string> = []) =>
  [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    `form-action 'self'${formTargets.map((origin) => ` ${origin}`).join("")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'"
  ].join("; ")

export const Layout = (props: { readonly title: string; readonly wide?: boolean; readonly children: ComponentChildren }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${props.title} – civicstack sign-on`}</title>
      <style dangerouslySetInnerHTML={{ __html: STYLE }} />
    </head>
    <body>
      <header>civicstack sign-on</header>
      <main class={props.wide === true ? "wide" : undefined}>{props.children}</main>
    </body>
  </html>
)

/** A whole document; every value in it is escaped by the renderer. */
export const renderPage = (page: preact.JSX.Element) => `<!doctype html>${renderToString(page)}`
