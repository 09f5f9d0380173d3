import { installsWithItsCivicstackNeeds } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

/**
 * A host as it installs the service: built from these sources, packed, and installed from the tarball with those of
 * @civicstack/jobs and @civicstack/outbound. Signing in hashes and verifies passwords with the native argon2 binding.
 */
describe("installing the packed package", () => {
  installsWithItsCivicstackNeeds(fileURLToPath(new URL("..", import.meta.url)), {
    script: `
      const { Effect } = await import("effect")
      const sso = await import("@civicstack/core-sso")
      const password = "correct horse battery staple"
      const program = Effect.gen(function*() {
        const directory = yield* sso.Directory
        const signIn = yield* sso.SignIn
        yield* directory.createUser({ email: "ada@example.com", name: "Ada", password })
        const started = yield* signIn.signIn({ email: "ada@example.com", password, address: "192.0.2.1" })
        const refused = yield* Effect.flip(signIn.signIn({ email: "ada@example.com", password: "a wrong one", address: "192.0.2.1" }))
        return [started.user.email, started.awaitingSecondStep, refused._tag].join(" ")
      })
      console.log(await Effect.runPromise(program.pipe(Effect.provide(sso.layerMemory()))))`,
    printed: "ada@example.com false SignInRefused"
  })
})
