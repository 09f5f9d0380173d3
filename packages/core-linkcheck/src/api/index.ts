export * from "./errors"
export * from "./LinkcheckApi"
export * from "./reports"
export * from "./requests"
