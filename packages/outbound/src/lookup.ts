import { promises as dns } from "node:dns"
import type { LookupAddress } from "node:dns"
import type { LookupFunction } from "node:net"
import { isPublicAddress } from "./addresses"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Resolves a host name to its addresses (the system resolver, or one of a test's own). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** The `code` of the error a guarded lookup fails with when a host resolves to an address that is not public. */
export const REFUSED_ADDRESS_CODE = "EOUTBOUND_REFUSED_ADDRESS"

export class RefusedAddressError extends Error {
  readonly code = REFUSED_ADDRESS_CODE
  constructor(readonly hostname: string, readonly address: string) {
    super(`${hostname} resolves to the non-public address ${address}`)
  }
}

export const systemResolver: Resolver = async (hostname) => {
  const addresses = await dns.lookup(hostname, { all: true, verbatim: true })
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

const notFound = (hostname: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname })

/**
 * A socket `lookup` that resolves with `resolve` and refuses a host when any of its addresses is not public (unless
 * `allowPrivateAddresses`): refusing when one is closes the trick of a name that resolves to a public and a private
 * address at once.
 */
export const guardedLookup = (options: {
  readonly resolve?: Resolver | undefined
  readonly allowPrivateAddresses: boolean
}): LookupFunction =>
(hostname, lookupOptions, callback) => {
  const resolve = options.resolve ?? systemResolver
  const wantedFamily = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : undefined
  const guarded = async (): Promise<ReadonlyArray<LookupAddress>> => {
    const resolved = await resolve(hostname)
    const refused = options.allowPrivateAddresses ? undefined : resolved.find(({ address }) => !isPublicAddress(address))
    if (refused !== undefined) throw new RefusedAddressError(hostname, refused.address)
    const addresses = resolved
      .filter(({ family }) => wantedFamily === undefined || family === wantedFamily)
      .map(({ address, family }) => ({ address, family }))
    if (addresses.length === 0) throw notFound(hostname)
    return addresses
  }
  guarded().then(
    (addresses) => {
      const [first] = addresses
      if (lookupOptions.all === true || first === undefined) callback(null, [...addresses])
      else callback(null, first.address, first.family)
    },
    (error: NodeJS.ErrnoException) => callback(error, "", 0)
  )
}
