import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { clientAddressOf, forwardedOverHttps, TrustedProxiesFromString } from "../src/clientAddress"

const decode = Schema.decodeUnknownEither(TrustedProxiesFromString)

describe("clientAddressOf", () => {
  it("trusting no proxy, the peer is the client whatever X-Forwarded-For says", () => {
    expect(clientAddressOf(false)("203.0.113.9", "192.0.2.1")).toBe("192.0.2.1")
  })

  it("trusting one proxy, the client is the entry that proxy appended: the right-most", () => {
    const addressOf = clientAddressOf(1)
    expect(addressOf("10.1.1.1, 203.0.113.9", "192.0.2.1")).toBe("203.0.113.9")
    expect(addressOf(undefined, "192.0.2.1")).toBe("192.0.2.1")
  })

  it("trusting proxies by address, the right-most address that is not one of them is the client", () => {
    const addressOf = clientAddressOf(["loopback", "10.0.0.0/8"])
    expect(addressOf("198.51.100.1, 203.0.113.9, 10.2.3.4", "127.0.0.1")).toBe("203.0.113.9")
    expect(addressOf("203.0.113.9", "192.0.2.1")).toBe("192.0.2.1")
    expect(addressOf("203.0.113.9", "::ffff:127.0.0.1")).toBe("203.0.113.9")
  })

  it("without a peer address, counts under one name", () => {
    expect(clientAddressOf(1)("203.0.113.9", undefined)).toBe("unknown")
  })
})

describe("forwardedOverHttps", () => {
  it("believes X-Forwarded-Proto only from a trusted proxy, and only its own (right-most) entry", () => {
    const overHttps = forwardedOverHttps(["loopback"])
    expect(overHttps("https", "127.0.0.1")).toBe(true)
    expect(overHttps("http, https", "127.0.0.1")).toBe(true)
    expect(overHttps("https, http", "127.0.0.1")).toBe(false)
    expect(overHttps("https", "192.0.2.1")).toBe(false)
    expect(forwardedOverHttps(false)("https", "127.0.0.1")).toBe(false)
  })
})

describe("TRUST_PROXY", () => {
  it("reads false, a hop count, or addresses and ranges", () => {
    expect(decode("false")).toEqual(Either.right(false))
    expect(decode("2")).toEqual(Either.right(2))
    expect(decode("10.0.0.0/8, loopback")).toEqual(Either.right(["10.0.0.0/8", "loopback"]))
  })

  it("refuses true, which would believe what the client writes, and what is not an address", () => {
    expect(Either.isLeft(decode("true"))).toBe(true)
    expect(Either.isLeft(decode("10.0.0.0/99"))).toBe(true)
    expect(Either.isLeft(decode("proxy.internal"))).toBe(true)
  })
})
