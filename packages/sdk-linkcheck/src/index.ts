export {
  BatchNotFound,
  BatchReport,
  BatchStatus,
  BatchTotals,
  DEFAULT_CHECKED_WITHIN_SECONDS,
  Forbidden,
  InvalidRequest,
  LinkcheckApi,
  LinkReport,
  LinkStatus,
  MAX_BATCH_SIZE,
  Priority,
  Unauthenticated
} from "@civicstack/core-linkcheck/api"
export { InvalidWebhookBody, LinkcheckClientError, WaitTimeout } from "./errors"
export {
  type AccessRefused,
  type CheckOptions,
  type CreateBatchOptions,
  type CreatedBatchReport,
  LinkcheckClient,
  type LinkcheckClientOptions,
  type LinkcheckClientService,
  makeLinkcheckClient,
  type WaitForBatchOptions
} from "./LinkcheckClient"
export { createLinkcheckClient, type CreateLinkcheckClientOptions, type LinkcheckPromiseClient } from "./promiseClient"
export { parseWebhook, SIGNATURE_HEADER, SIGNATURE_HEADER_LOWERCASE, verifyWebhookSignature } from "./webhook"
