import { describe, expect, it } from "@effect/vitest"
import { classifyAddress, isNonPublicAddress } from "../../src/domain/privateAddress"

describe("classifyAddress", () => {
  const cases: ReadonlyArray<readonly [string, ReturnType<typeof classifyAddress>]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", "public"],
    ["172.15.255.255", "public"],
    ["192.168.1.1", "private"],
    ["192.169.0.1", "public"],
    ["169.254.1.1", "linkLocal"],
    ["169.254.169.254", "metadata"],
    ["100.64.0.1", "sharedAddressSpace"],
    ["100.127.255.255", "sharedAddressSpace"],
    ["100.128.0.1", "public"],
    ["0.0.0.0", "unspecified"],
    ["8.8.8.8", "public"],
    ["93.184.216.34", "public"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["::", "unspecified"],
    ["fc00::1", "private"],
    ["fdff:ffff::1", "private"],
    ["fd00:ec2::254", "metadata"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["febf::1", "linkLocal"],
    ["fec0::1", "public"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:8.8.8.8", "public"],
    ["2001:4860:4860::8888", "public"],
    ["2606:2800:220:1:248:1893:25c8:1946", "public"]
  ]
  for (const [address, kind] of cases) {
    it(`${address} is ${kind}`, () => {
      expect(classifyAddress(address)).toBe(kind)
    })
  }

  it("is null for text that is not an IP address", () => {
    for (const text of ["example.org", "256.1.1.1", "1.2.3", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", ""]) {
      expect(classifyAddress(text)).toBeNull()
    }
  })
})

describe("isNonPublicAddress", () => {
  it("is true only for addresses a check must not reach", () => {
    expect(["127.0.0.1", "10.1.2.3", "::1", "169.254.169.254", "fd00:ec2::254"].map(isNonPublicAddress))
      .toEqual([true, true, true, true, true])
    expect(["8.8.8.8", "2001:db8::1", "example.org"].map(isNonPublicAddress)).toEqual([false, false, false])
  })
})
