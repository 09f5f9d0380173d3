import type { InspectorConfig } from "../../settings"

export const defaultInspectorConfig: InspectorConfig = {
  userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) " +
    "Chrome/131.0.0.0 Safari/537.36 civicstack-linkcheck/0.1 (+https://github.com/civicstack)",
  connectTimeout: "15 seconds",
  responseTimeout: "15 seconds",
  checkTimeout: "30 seconds",
  slowThreshold: "5 seconds",
  maxRedirects: 8,
  allowPrivateAddresses: false,
  suspiciousDomains: [],
  internalDomains: [],
  perHostConnections: 4,
  retries: { attempts: 3, maxRetryAfter: "60 seconds", baseDelay: "1 second" }
}
