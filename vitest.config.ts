import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@civicstack/source"] },
  ssr: { resolve: { conditions: ["@civicstack/source"] } },
  test: {
    globalSetup: ["apps/server/test/globalSetup.ts", "packages/kit/src/testing/tarballsSetup.ts"],
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    // Most test files wait on servers, databases and browsers rather than compute: two files at a time on two CPUs
    // took 784 and 809 s here where one at a time took about 1300 s (vitest's default on two CPUs is one).
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
