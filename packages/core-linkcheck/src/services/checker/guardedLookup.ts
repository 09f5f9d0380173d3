import { promises as dns } from "node:dns"
import type { LookupAddress } from "node:dns"
import type { LookupFunction } from "node:net"
import { isNonPublicAddress } from "../../domain/privateAddress"

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** Raised inside the socket's DNS lookup when a host resolves to an address that checks must not reach. */
class PrivateAddressRefused extends Error {
  readonly code = "ELINKCHECK_PRIVATE_ADDRESS"
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
 * A socket `lookup` that resolves with `resolve` and refuses every host with a loopback, private,
 * link-local or metadata address, unless private addresses are allowed. Refusing when any address is
 * non-public closes the trick of a name that resolves to a public and a private address at once.
 */
export const makeGuardedLookup = (resolve: Resolver, allowPrivateAddresses: boolean): LookupFunction =>
(hostname, options, callback) => {
  const wantedFamily = options.family === 4 || options.family === 6 ? options.family : undefined
  const guarded = async (): Promise<ReadonlyArray<LookupAddress>> => {
    const resolved = await resolve(hostname)
    const refused = allowPrivateAddresses ? undefined : resolved.find(({ address }) => isNonPublicAddress(address))
    if (refused !== undefined) throw new PrivateAddressRefused(hostname, refused.address)
    const addresses = resolved
      .filter(({ family }) => wantedFamily === undefined || family === wantedFamily)
      .map(({ address, family }) => ({ address, family }))
    if (addresses.length === 0) throw notFound(hostname)
    return addresses
  }
  guarded().then(
    (addresses) => {
      const [first] = addresses
      if (options.all === true || first === undefined) callback(null, [...addresses])
      else callback(null, first.address, first.family)
    },
    (error: NodeJS.ErrnoException) => callback(error, "", 0)
  )
}
