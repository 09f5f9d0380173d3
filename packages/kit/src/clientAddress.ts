import proxyAddr from "proxy-addr"
import { Either, ParseResult, Schema } from "effect"
import { expecting } from "./config"

/**
 * Which hops in front of the server are proxies it trusts, as Express's `trust proxy`: none (`false`), how many, or
 * their addresses and CIDR ranges (with proxy-addr's names `loopback`, `linklocal` and `uniquelocal`).
 */
export type TrustedProxies = false | number | ReadonlyArray<string>

const trustOf = (trusted: TrustedProxies): (address: string, hop: number) => boolean =>
  trusted === false
    ? () => false
    : typeof trusted === "number"
    ? (_, hop) => hop < trusted
    : proxyAddr.compile([...trusted])

/**
 * The address a request comes from: walking `X-Forwarded-For` from the peer leftwards, the first address that is not
 * a trusted proxy. The left-most entries are written by the client, so they are only reached through trusted hops.
 */
export const clientAddressOf = (trusted: TrustedProxies) => {
  const trust = trustOf(trusted)
  return (forwardedFor: string | undefined, remoteAddress: string | undefined): string => {
    if (remoteAddress === undefined) return "unknown"
    const request = { connection: { remoteAddress }, socket: { remoteAddress }, headers: { "x-forwarded-for": forwardedFor } }
    return proxyAddr(request as unknown as Parameters<typeof proxyAddr>[0], trust)
  }
}

/** Whether a proxy the server trusts, its peer, says in `X-Forwarded-Proto` that the request came over https. */
export const forwardedOverHttps = (trusted: TrustedProxies) => {
  const trust = trustOf(trusted)
  return (forwardedProto: string | undefined, remoteAddress: string | undefined): boolean =>
    remoteAddress !== undefined && forwardedProto !== undefined && trust(remoteAddress, 0) &&
    forwardedProto.split(",").at(-1)?.trim().toLowerCase() === "https"
}

/** `TRUST_PROXY`: `false`, a number of hops, or a comma-separated list of addresses and CIDR ranges. */
export const TrustedProxiesFromString: Schema.Schema<TrustedProxies, string> = Schema.transformOrFail(
  Schema.String,
  Schema.Union(Schema.Literal(false), Schema.Number, Schema.Array(Schema.String)),
  {
    strict: true,
    decode: (text, _, ast) => {
      const value = text.trim()
      if (value === "false" || value === "0" || value === "") return ParseResult.succeed<TrustedProxies>(false)
      if (/^\d+$/.test(value)) return ParseResult.succeed<TrustedProxies>(Number(value))
      const addresses = value.split(",").map((part) => part.trim()).filter((part) => part !== "")
      // `true` is refused here too: it would believe the left-most entry, which the client writes
      return Either.isRight(Either.try(() => proxyAddr.compile(addresses)))
        ? ParseResult.succeed<TrustedProxies>(addresses)
        : ParseResult.fail(new ParseResult.Type(ast, text))
    },
    encode: (trusted) => ParseResult.succeed(trusted === false ? "false" : typeof trusted === "number" ? String(trusted) : trusted.join(","))
  }
).annotations(expecting("false, a number of proxies, or a comma-separated list of their addresses and CIDR ranges"))
