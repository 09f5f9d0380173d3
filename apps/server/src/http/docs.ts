import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"

/** An OpenAPI document the server publishes at `/openapi/<name>.json`. */
export interface PublishedDocument {
  readonly name: string
  readonly title: string
  readonly api: HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.Any, any, any>
}

export const documentPath = (name: string) => `/openapi/${name}.json` as const

const swaggerUiDirectory = Path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))

/** The files of Swagger UI the page loads, all served from here: no request leaves the machine. */
const assets: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png"
}

/** Starts Swagger UI on the documents the page lists; a file of its own, so the page needs no inline script. */
const startScript = `
const documents = [...document.querySelectorAll("#documents a")].map((link) => ({ url: link.href, name: link.dataset.name }))
window.ui = SwaggerUIBundle({
  urls: documents,
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
  validatorUrl: null
})
`

const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const page = (documents: ReadonlyArray<PublishedDocument>) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>civicstack API documentation</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<main>
<h1>civicstack API documentation</h1>
<p>OpenAPI 3.1 documents of the services this server runs:</p>
<ul id="documents">
${
  documents.map((document) =>
    `<li><a href="${documentPath(document.name)}" data-name="${escapeHtml(document.name)}">${escapeHtml(document.title)}</a></li>`
  ).join("\n")
}
</ul>
<div id="swagger-ui"></div>
</main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/assets/start.js"></script>
</body>
</html>
`

const readAsset = (file: string) => Effect.promise(() => Fs.promises.readFile(Path.join(swaggerUiDirectory, file)))

/**
 * `/openapi/<name>.json` for each document (OpenAPI 3.1, from the contract itself) and `/docs`, a page that lists them
 * and shows them with Swagger UI served from local files under a strict Content-Security-Policy.
 */
export const docsRoutes = (documents: ReadonlyArray<PublishedDocument>) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      for (const document of documents) {
        const spec = OpenApi.fromApi(document.api.annotate(OpenApi.Title, document.title))
        yield* router.get(documentPath(document.name), Effect.succeed(HttpServerResponse.unsafeJson(spec)))
      }
      const html = page(documents)
      yield* router.get(
        "/docs",
        Effect.succeed(HttpServerResponse.text(html, {
          contentType: "text/html; charset=utf-8",
          headers: { "content-security-policy": CONTENT_SECURITY_POLICY }
        }))
      )
      yield* router.get(
        "/docs/assets/start.js",
        Effect.succeed(HttpServerResponse.text(startScript, { contentType: "text/javascript; charset=utf-8" }))
      )
      for (const [file, contentType] of Object.entries(assets)) {
        const cached = yield* Effect.cached(readAsset(file))
        yield* router.get(
          `/docs/assets/${file}` as const,
          Effect.map(cached, (bytes) =>
            HttpServerResponse.uint8Array(bytes, {
              contentType,
              headers: { "cache-control": "public, max-age=86400" }
            }))
        )
      }
    })
  )
