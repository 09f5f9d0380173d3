export { type ClientErrorFields, failureMapping, type FailureMapping, type TransportOrContractFailure } from "./failures"
export { ClientTag, type ClientTagClass } from "./clientTag"
export { fetchHttpClient, type PromiseRunner, promiseRunner } from "./runtime"
