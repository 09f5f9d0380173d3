export { type ClientErrorFields, failureMapping, type FailureMapping, type TransportOrContractFailure } from "./failures"
export { fetchHttpClient, type PromiseRunner, promiseRunner } from "./runtime"
