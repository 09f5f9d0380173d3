import { createServer } from "node:http"
import type { RequestListener, Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

const htmlPage = (title: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`

/** Serves `handler` on 127.0.0.1 on a port the system picks, until the scope closes. Returns the base URL. */
const serveLocally = (handler: RequestListener) =>
  Effect.acquireRelease(
    Effect.async<Server>((resume) => {
      const server = createServer(handler)
      server.once("error", (error) => resume(Effect.die(error)))
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

/**
 * Two local websites to check: a new site with one page (anything else is a 404), and the old site it replaced,
 * whose old address reaches the new page only after two redirects.
 */
export const startDemoSites = Effect.gen(function*() {
  const newSite = yield* serveLocally((request, response) => {
    if (request.url === "/guidance") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(htmlPage("Guidance"))
    } else {
      response.writeHead(404, { "content-type": "text/html; charset=utf-8" }).end(htmlPage("Page not found"))
    }
  })
  const oldSite = yield* serveLocally((request, response) => {
    const location = request.url === "/guidance" ? "/guidance/" : `${newSite}/guidance`
    response.writeHead(301, { location }).end()
  })
  return { newSite, oldSite }
})
