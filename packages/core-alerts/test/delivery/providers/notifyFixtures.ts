import * as Http from "node:http"
import type * as Net from "node:net"
import { Effect } from "effect"
import { jwtVerify } from "jose"
import type { JWTPayload } from "jose"

export const serviceId = "26785a09-ab16-4eb0-8407-a37497a57506"
export const secretKey = "3d844edf-8d35-48ac-975b-e847b4f122b0"
export const apiKey = `alerts_test-key-${serviceId}-${secretKey}`

export interface NotifyCall {
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  readonly claims: JWTPayload | undefined
  readonly body: unknown
}

export interface CannedAnswer {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: unknown
}

const notifyErrors = (status: number, error: string, message: string): CannedAnswer => ({
  status,
  body: { errors: [{ error, message }], status_code: status }
})

export const answers = {
  created: (body: { readonly reference?: unknown }): CannedAnswer => ({
    status: 201,
    body: { id: "740e5834-3a29-46b4-9a6f-16142fde533a", reference: body.reference ?? null, content: {} }
  }),
  badAddress: notifyErrors(400, "ValidationError", "email_address Not a valid email address"),
  missingPersonalisation: notifyErrors(400, "BadRequestError", "Missing personalisation: body"),
  rateLimited: { ...notifyErrors(429, "RateLimitError", "Exceeded rate limit for key type LIVE of 3000 requests per 60 seconds"), headers: { "retry-after": "7" } },
  serverError: notifyErrors(500, "Exception", "Internal server error")
}

/**
 * A local stand-in for the Notify API: it checks the bearer JWT with the service's secret (answering 403 like Notify
 * when it does not verify or names another service), records each call, and answers with `answer` (201 by default).
 */
export const startNotifyServer = (answer: (call: NotifyCall) => CannedAnswer = (call) => answers.created(call.body as object)) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const calls: Array<NotifyCall> = []
      const secret = new TextEncoder().encode(secretKey)
      const server = Http.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", async () => {
          const reply = ({ body, headers, status }: CannedAnswer) => {
            response.writeHead(status, { "content-type": "application/json", ...headers })
            response.end(body === undefined ? "" : JSON.stringify(body))
          }
          if (request.method !== "POST" || request.url !== "/v2/notifications/email") {
            return reply(notifyErrors(404, "NotFound", "Not Found"))
          }
          const authorization = request.headers.authorization
          const token = authorization?.startsWith("Bearer ") ? authorization.slice(7) : ""
          const claims = await jwtVerify(token, secret, { algorithms: ["HS256"] }).then(
            (verified) => verified.payload,
            () => undefined
          )
          const call: NotifyCall = {
            authorization,
            contentType: request.headers["content-type"],
            claims,
            body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
          }
          calls.push(call)
          if (claims === undefined) return reply(notifyErrors(403, "AuthError", "Invalid token: signature, api token not found"))
          if (claims.iss !== serviceId) return reply(notifyErrors(403, "AuthError", "Invalid token: service not found"))
          reply(answer(call))
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
      const { port } = server.address() as Net.AddressInfo
      return { server, calls, baseUrl: `http://127.0.0.1:${port}` }
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )
