import ipaddr from "ipaddr.js"

/**
 * Global unicast IPv6. ipaddr.js calls other space unicast too: unassigned (`4000::1`), site-local `fec0::/10`
 * (deprecated, still routed inside some networks) and NAT64 local-use `64:ff9b:1::/48`.
 */
const globalUnicast: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse("2000::"), 3]

const ipv4From = (high: number, low: number) => ipaddr.IPv4.parse(`${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`)

/**
 * The IPv4 address an IPv6 address carries and reaches: IPv4-mapped and IPv4-compatible (`::ffff:a.b.c.d`,
 * `::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`).
 */
const embeddedIpv4 = (address: ipaddr.IPv6): ipaddr.IPv4 | undefined => {
  const parts = address.parts
  if (address.isIPv4MappedAddress()) return address.toIPv4Address()
  const zeroes = (from: number, to: number) => parts.slice(from, to).every((part) => part === 0)
  if (zeroes(0, 6) && (parts[6] !== 0 || parts[7]! > 1)) return ipv4From(parts[6]!, parts[7]!)
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zeroes(2, 6)) return ipv4From(parts[6]!, parts[7]!)
  if (parts[0] === 0x2002) return ipv4From(parts[1]!, parts[2]!)
  return undefined
}

/**
 * Whether an outbound request may go to this IP address: only globally routed unicast addresses, as ipaddr.js ranges
 * them, and for IPv6 forms that carry an IPv4 address, only when that address is one too. Loopback, private,
 * link-local (the cloud metadata address among them), carrier-grade NAT, reserved, documentation, benchmarking,
 * broadcast, multicast, unique-local, site-local and Teredo addresses are refused. Not an address: false.
 */
export const isPublicAddress = (text: string): boolean => {
  const host = text.replace(/^\[|\]$/g, "")
  if (!ipaddr.isValid(host)) return false
  const address = ipaddr.parse(host)
  if (address.kind() === "ipv4") return address.range() === "unicast"
  const v6 = address as ipaddr.IPv6
  if (v6.zoneId !== undefined) return false
  const carried = embeddedIpv4(v6)
  if (carried !== undefined) return carried.range() === "unicast"
  return v6.range() === "unicast" && v6.match(globalUnicast)
}

/** Whether a URL's host is an IP address rather than a name. */
export const isIpAddress = (host: string) => ipaddr.isValid(host.replace(/^\[|\]$/g, ""))
