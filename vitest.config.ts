import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@civicstack/source"] },
  ssr: { resolve: { conditions: ["@civicstack/source"] } },
  test: {
    globalSetup: ["apps/server/test/globalSetup.ts", "packages/kit/src/testing/tarballsSetup.ts"],
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
