/**
 * Classifies IP addresses so that checks never reach into the machine or network the checker runs on.
 */
export type AddressKind =
  | "public"
  | "loopback"
  | "private"
  | "linkLocal"
  | "sharedAddressSpace"
  | "unspecified"
  | "metadata"

interface Ipv4Range {
  readonly kind: Exclude<AddressKind, "public">
  readonly base: number
  readonly prefix: number
}

const ipv4 = (kind: Ipv4Range["kind"], [a, b, c, d]: readonly [number, number, number, number], prefix: number): Ipv4Range => ({
  kind,
  base: ((a << 24) | (b << 16) | (c << 8) | d) >>> 0,
  prefix
})

// Most specific ranges first: the metadata address lies inside link-local.
const ipv4Ranges: ReadonlyArray<Ipv4Range> = [
  ipv4("metadata", [169, 254, 169, 254], 32),
  ipv4("unspecified", [0, 0, 0, 0], 8),
  ipv4("loopback", [127, 0, 0, 0], 8),
  ipv4("private", [10, 0, 0, 0], 8),
  ipv4("private", [172, 16, 0, 0], 12),
  ipv4("private", [192, 168, 0, 0], 16),
  ipv4("linkLocal", [169, 254, 0, 0], 16),
  ipv4("sharedAddressSpace", [100, 64, 0, 0], 10)
]

const ipv4InRange = (address: number, range: Ipv4Range): boolean => {
  if (range.prefix === 0) return true
  const mask = (0xffffffff << (32 - range.prefix)) >>> 0
  return ((address & mask) >>> 0) === ((range.base & mask) >>> 0)
}

/** The address as an unsigned 32-bit number, or null when it is not a dotted-quad IPv4 address. */
export const parseIpv4 = (text: string): number | null => {
  const parts = text.split(".")
  if (parts.length !== 4) return null
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null
    const octet = Number(part)
    if (octet > 255) return null
    value = value * 256 + octet
  }
  return value
}

/** The address as eight 16-bit groups, or null when it is not an IPv6 address. A zone (`%eth0`) is ignored. */
export const parseIpv6 = (text: string): ReadonlyArray<number> | null => {
  const withoutZone = text.split("%")[0] ?? ""
  if (!withoutZone.includes(":")) return null
  const halves = withoutZone.split("::")
  if (halves.length > 2) return null
  const parseGroups = (half: string): Array<number> | null => {
    if (half === "") return []
    const groups: Array<number> = []
    const pieces = half.split(":")
    for (const [index, piece] of pieces.entries()) {
      if (index === pieces.length - 1 && piece.includes(".")) {
        const embedded = parseIpv4(piece)
        if (embedded === null) return null
        groups.push(Math.floor(embedded / 0x10000), embedded % 0x10000)
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(piece)) return null
        groups.push(parseInt(piece, 16))
      }
    }
    return groups
  }
  const head = parseGroups(halves[0] ?? "")
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? "") : []
  if (head === null || tail === null) return null
  if (halves.length === 1) return head.length === 8 ? head : null
  const missing = 8 - head.length - tail.length
  if (missing < 1) return null
  return [...head, ...Array<number>(missing).fill(0), ...tail]
}

const groupsStartWith = (groups: ReadonlyArray<number>, prefix: ReadonlyArray<number>): boolean =>
  prefix.every((group, index) => groups[index] === group)

const classifyIpv6 = (groups: ReadonlyArray<number>): AddressKind => {
  const [first = 0] = groups
  const last = groups[7] ?? 0
  const allZeroBeforeLast = groups.slice(0, 7).every((group) => group === 0)
  if (allZeroBeforeLast && last === 0) return "unspecified"
  if (allZeroBeforeLast && last === 1) return "loopback"
  if (groupsStartWith(groups, [0, 0, 0, 0, 0, 0xffff])) {
    const mapped = (groups[6] ?? 0) * 0x10000 + last
    return classifyIpv4(mapped)
  }
  if (groupsStartWith(groups, [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254])) return "metadata"
  if ((first & 0xfe00) === 0xfc00) return "private"
  if ((first & 0xffc0) === 0xfe80) return "linkLocal"
  return "public"
}

const classifyIpv4 = (address: number): AddressKind =>
  ipv4Ranges.find((range) => ipv4InRange(address, range))?.kind ?? "public"

/** What kind of address this is, or null when the text is not an IP address. IPv6 may be given with brackets. */
export const classifyAddress = (text: string): AddressKind | null => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  const v4 = parseIpv4(bare)
  if (v4 !== null) return classifyIpv4(v4)
  const v6 = parseIpv6(bare)
  if (v6 !== null) return classifyIpv6(v6)
  return null
}

/** True for an IP address that a link check must not reach unless private addresses are allowed. */
export const isNonPublicAddress = (text: string): boolean => {
  const kind = classifyAddress(text)
  return kind !== null && kind !== "public"
}
