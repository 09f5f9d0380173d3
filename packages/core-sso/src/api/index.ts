export * from "./admin"
export * from "./errors"
export * from "./oauth"
export * from "./SsoApi"
