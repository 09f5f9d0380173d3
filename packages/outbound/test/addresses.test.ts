import { describe, expect, it } from "vitest"
import { isPublicAddress } from "../src/addresses"

describe("isPublicAddress refuses every address that is not globally routed unicast", () => {
  const refused: ReadonlyArray<readonly [string, string]> = [
    ["IPv4 loopback", "127.0.0.1"],
    ["IPv4 unspecified", "0.0.0.0"],
    ["private 10/8", "10.1.2.3"],
    ["private 172.16/12", "172.20.0.1"],
    ["private 192.168/16", "192.168.1.1"],
    ["link-local", "169.254.1.1"],
    ["cloud metadata", "169.254.169.254"],
    ["carrier-grade NAT 100.64/10", "100.64.0.1"],
    ["IETF protocol assignments 192.0.0.0/24", "192.0.0.8"],
    ["benchmarking 198.18.0.0/15", "198.19.255.1"],
    ["reserved 240.0.0.0/4", "240.0.0.1"],
    ["limited broadcast", "255.255.255.255"],
    ["IPv4 multicast", "224.0.0.251"],
    ["documentation 192.0.2.0/24", "192.0.2.10"],
    ["IPv6 loopback", "::1"],
    ["IPv6 unspecified", "::"],
    ["IPv4-compatible loopback ::127.0.0.1", "::127.0.0.1"],
    ["IPv4-mapped loopback", "::ffff:127.0.0.1"],
    ["IPv4-mapped private, hex form", "::ffff:a00:1"],
    ["NAT64 of 10.0.0.1 (64:ff9b::/96)", "64:ff9b::a00:1"],
    ["NAT64 of loopback, dotted form", "64:ff9b::127.0.0.1"],
    ["NAT64 local-use 64:ff9b:1::/48", "64:ff9b:1::8.8.8.8"],
    ["6to4 of loopback (2002::/16)", "2002:7f00:1::"],
    ["6to4 of 10.0.0.1", "2002:a00:1::1"],
    ["site-local fec0::/10", "fec0::1"],
    ["unique-local fc00::/7", "fd00:ec2::254"],
    ["IPv6 link-local", "fe80::1"],
    ["IPv6 link-local with a zone", "fe80::1%eth0"],
    ["IPv6 multicast", "ff02::1"],
    ["Teredo 2001::/32", "2001::1"],
    ["IPv6 documentation 2001:db8::/32", "2001:db8::1"],
    ["bracketed IPv6 loopback", "[::1]"],
    ["unassigned IPv6 outside 2000::/3", "4000::1"],
    ["not an address", "example.org"]
  ]
  it.each(refused)("%s: %s", (_name, address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  const allowed: ReadonlyArray<readonly [string, string]> = [
    ["public IPv4", "8.8.8.8"],
    ["public IPv4 next to the benchmarking range", "198.20.0.1"],
    ["public IPv6", "2606:4700:4700::1111"],
    ["IPv4-mapped public", "::ffff:8.8.8.8"],
    ["NAT64 of a public IPv4", "64:ff9b::808:808"],
    ["6to4 of a public IPv4", "2002:808:808::1"]
  ]
  it.each(allowed)("allows %s: %s", (_name, address) => {
    expect(isPublicAddress(address)).toBe(true)
  })
})
