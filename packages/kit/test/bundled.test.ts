import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const packages = fileURLToPath(new URL("../..", import.meta.url))

const manifests = Fs.readdirSync(packages).flatMap((name) => {
  const file = Path.join(packages, name, "package.json")
  return Fs.existsSync(file) ? [{ name, manifest: JSON.parse(Fs.readFileSync(file, "utf8")) as Record<string, any> }] : []
})

describe("the kit", () => {
  it("is private, and no published package depends on it: each bundles it in", () => {
    expect(manifests.find(({ name }) => name === "kit")?.manifest["private"]).toBe(true)
    const dependents = manifests.filter(({ manifest }) =>
      manifest["private"] !== true &&
      ["dependencies", "peerDependencies", "optionalDependencies"].some((field) => "@civicstack/kit" in (manifest[field] ?? {}))
    )
    expect(dependents.map(({ name }) => name)).toEqual([])
  })

  it("is bundled by the build of every published package that uses it", () => {
    const users = manifests.filter(({ manifest, name }) =>
      manifest["private"] !== true && name !== "kit" && "@civicstack/kit" in (manifest["devDependencies"] ?? {})
    )
    expect(users.length).toBeGreaterThan(0)
    for (const { name } of users) {
      const build = Fs.readFileSync(Path.join(packages, name, "tsup.config.ts"), "utf8")
      expect({ name, bundlesTheKit: build.includes("packageBuild(") }).toEqual({ name, bundlesTheKit: true })
    }
  })
})
