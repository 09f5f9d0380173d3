import { Either } from "effect"

export interface ClientCredentials {
  readonly clientId: string
  readonly clientSecret: string
}

/** Why the credentials of a request were refused, as the token endpoint answers it. */
export type CredentialsProblem =
  | { readonly code: "invalid_request"; readonly description: string }
  | { readonly code: "invalid_client"; readonly description: string }

/** RFC 6749 section 2.3.1: each half is form-urlencoded before the pair is base64-encoded. */
const formDecode = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

const parseBasic = (authorization: string): ClientCredentials | undefined => {
  const match = /^basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization)
  if (match === null) return undefined
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  if (colon < 0) return undefined
  const clientId = formDecode(decoded.slice(0, colon))
  const clientSecret = formDecode(decoded.slice(colon + 1))
  return clientId === undefined || clientSecret === undefined ? undefined : { clientId, clientSecret }
}

/**
 * The client's credentials, from HTTP Basic or from the body; both at once is `invalid_request`, neither or a
 * malformed header `invalid_client`.
 */
export const clientCredentials = (
  authorization: string | undefined,
  body: { readonly client_id?: string | undefined; readonly client_secret?: string | undefined }
): Either.Either<ClientCredentials, CredentialsProblem> => {
  const inBody = body.client_id !== undefined || body.client_secret !== undefined
  if (authorization !== undefined && /^basic\b/i.test(authorization)) {
    if (inBody) {
      return Either.left({
        code: "invalid_request",
        description: "Send the client credentials either by HTTP Basic or in the body, not both"
      })
    }
    const basic = parseBasic(authorization)
    return basic === undefined
      ? Either.left({ code: "invalid_client", description: "The Authorization header is not valid HTTP Basic" })
      : Either.right(basic)
  }
  if (body.client_id === undefined || body.client_secret === undefined) {
    return Either.left({
      code: "invalid_client",
      description: "Client authentication is required: client_id and client_secret, or HTTP Basic"
    })
  }
  return Either.right({ clientId: body.client_id, clientSecret: body.client_secret })
}
