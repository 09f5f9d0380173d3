/** The access names a service's API re-exports as its own, so that its users never need the kit. */
export {
  Caller,
  Forbidden,
  ForbiddenResponse,
  isAdmin,
  OPEN_CALLER,
  Unauthenticated,
  UnauthenticatedResponse
} from "./access"
