import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import type { Application } from "../domain/records"
import { Directory } from "../services/Directory"
import type { ApplicationChanges } from "../services/Directory"
import { SsoParts } from "../services/SsoParts"
import { ApplicationFormPage, ApplicationsPage, CredentialsPage } from "./pages/manage"
import type { ApplicationForm } from "./pages/manage"
import { ErrorPage } from "./pages/pages"
import { makePageTools } from "./pageTools"

const EMPTY_FORM: ApplicationForm = {
  name: "",
  description: "",
  homeUri: "",
  redirectUris: "",
  permissions: "",
  pushUpdates: false,
  pushFormat: "seed",
  requirePkce: false,
  requireTwoStep: false
}

const formOf = (application: Application): ApplicationForm => ({
  name: application.name,
  description: application.description,
  homeUri: application.homeUri,
  redirectUris: application.redirectUris.join("\n"),
  permissions: application.permissions.join(" "),
  pushUpdates: application.pushUpdates,
  pushFormat: application.pushFormat,
  requirePkce: application.requirePkce,
  requireTwoStep: application.requireTwoStep
})

/** The form as posted, kept as typed so that a refused one is shown again. */
const postedForm = (fields: Readonly<Record<string, string>>): ApplicationForm => ({
  name: fields["name"] ?? "",
  description: fields["description"] ?? "",
  homeUri: fields["home_uri"] ?? "",
  redirectUris: fields["redirect_uris"] ?? "",
  permissions: fields["permissions"] ?? "",
  pushUpdates: fields["push_updates"] === "on",
  pushFormat: fields["push_format"] === "gds-sso" ? "gds-sso" : "seed",
  requirePkce: fields["require_pkce"] === "on",
  requireTwoStep: fields["require_2sv"] === "on"
})

const changesOf = (form: ApplicationForm) => ({
  name: form.name.trim(),
  description: form.description.trim(),
  homeUri: form.homeUri.trim(),
  redirectUris: form.redirectUris.split(/\r?\n/).map((uri) => uri.trim()).filter((uri) => uri !== ""),
  permissions: form.permissions.split(/\s+/).filter((name) => name !== ""),
  pushUpdates: form.pushUpdates,
  pushFormat: form.pushFormat === "gds-sso" ? "gds-sso" as const : "seed" as const,
  requirePkce: form.requirePkce,
  requireTwoStep: form.requireTwoStep
}) satisfies ApplicationChanges

/** Why a change was refused, as the form shows it. */
const problemOf = (refusal: { readonly _tag: string; readonly message: string }) =>
  refusal._tag === "InvalidInput" ? `The ${refusal.message}.` : refusal._tag === "AlreadyTaken" ? `${refusal.message}.` : refusal.message

/** The applications' pages, for superadmins: list, register (credentials shown once), edit, rotate the secret. */
export const makeApplicationPages = Effect.gen(function*() {
  const tools = yield* makePageTools
  const { html, redirect } = tools
  const { store } = yield* SsoParts
  const directory = yield* Directory
  const { asSuperadmin } = tools

  const notFound = html(<ErrorPage title="No such application" message="There is no application at this address." />, 404)

  const withApplication = <Err, R>(
    id: string,
    page: (application: Application) => Effect.Effect<HttpServerResponse.HttpServerResponse, Err, R>
  ) => Effect.flatMap(store.applicationById(id), (found) => Option.isNone(found) ? Effect.succeed(notFound) : page(found.value))

  const refusedStatus = (tag: string) => (tag === "NotAllowed" ? 403 : tag === "AlreadyTaken" ? 409 : tag === "NotFound" ? 404 : 400)

  return {
    list: (request: HttpServerRequest.HttpServerRequest) =>
      asSuperadmin(request, () => Effect.map(directory.applications, (applications) => html(<ApplicationsPage applications={applications} />))),

    newForm: (request: HttpServerRequest.HttpServerRequest) =>
      asSuperadmin(request, (signedIn) =>
        Effect.succeed(html(
          <ApplicationFormPage title="Register an application" action="/manage/applications" form={EMPTY_FORM} csrfToken={signedIn.session.csrfToken} />
        ))),

    create: (request: HttpServerRequest.HttpServerRequest) =>
      asSuperadmin(request, (signedIn) =>
        Effect.gen(function*() {
          const fields = yield* tools.checkedForm(request, signedIn)
          const form = postedForm(Option.getOrElse(fields, () => ({})))
          const page = (status: number, problem: string) =>
            html(
              <ApplicationFormPage title="Register an application" action="/manage/applications" form={form} csrfToken={signedIn.session.csrfToken} problem={problem} />,
              status
            )
          if (Option.isNone(fields)) return page(403, "The form had expired. Reload the page and try again.")
          const created = yield* Effect.either(directory.createApplication(changesOf(form)))
          if (Either.isLeft(created)) {
            if (created.left._tag === "StoreError") return yield* Effect.fail(created.left)
            return page(refusedStatus(created.left._tag), problemOf(created.left))
          }
          const { application, clientId, clientSecret } = created.right
          return html(<CredentialsPage application={application} clientId={clientId} clientSecret={clientSecret} />, 201)
        })),

    show: (request: HttpServerRequest.HttpServerRequest, id: string) =>
      asSuperadmin(request, (signedIn) =>
        withApplication(id, (application) =>
          Effect.succeed(html(
            <ApplicationFormPage
              title={application.name}
              action={`/manage/applications/${encodeURIComponent(id)}`}
              rotateAction={`/manage/applications/${encodeURIComponent(id)}/rotate_secret`}
              form={formOf(application)}
              csrfToken={signedIn.session.csrfToken}
              done={new URL(request.url, "http://host").searchParams.get("done") === "saved" ? "Saved." : undefined}
            />
          )))),

    update: (request: HttpServerRequest.HttpServerRequest, id: string) =>
      asSuperadmin(request, (signedIn) =>
        withApplication(id, (application) =>
          Effect.gen(function*() {
            const fields = yield* tools.checkedForm(request, signedIn)
            const form = postedForm(Option.getOrElse(fields, () => ({})))
            const page = (status: number, problem: string) =>
              html(
                <ApplicationFormPage
                  title={application.name}
                  action={`/manage/applications/${encodeURIComponent(id)}`}
                  form={form}
                  csrfToken={signedIn.session.csrfToken}
                  problem={problem}
                />,
                status
              )
            if (Option.isNone(fields)) return page(403, "The form had expired. Reload the page and try again.")
            const updated = yield* Effect.either(directory.updateApplication(application.name, changesOf(form)))
            if (Either.isLeft(updated)) {
              if (updated.left._tag === "StoreError") return yield* Effect.fail(updated.left)
              return page(refusedStatus(updated.left._tag), problemOf(updated.left))
            }
            return redirect(`/manage/applications/${encodeURIComponent(id)}?done=saved`, 303)
          }))),

    rotate: (request: HttpServerRequest.HttpServerRequest, id: string) =>
      asSuperadmin(request, (signedIn) =>
        withApplication(id, (application) =>
          Effect.gen(function*() {
            if (Option.isNone(yield* tools.checkedForm(request, signedIn))) {
              return html(<ErrorPage title="The form had expired" message="Go back, reload the page and try again." />, 403)
            }
            const rotated = yield* directory.rotateClientSecret(application.name)
            return html(<CredentialsPage application={rotated.application} clientSecret={rotated.clientSecret} />)
          })))
  }
})
