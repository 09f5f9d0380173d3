import type { Config } from "effect"
import type { ServerConfig } from "../config"
import { alertsSettings, alertsSlot } from "./alerts"
import { linkcheckSettings, linkcheckSlot } from "./linkcheck"
import type { ServiceSlot } from "./slot"
import { callersCheckedBySso, ssoServiceLayer, ssoSettings, ssoSlot } from "./sso"

/** How the server reads each service's settings, in the order of the `SERVICES` default. */
export const SERVICE_SETTINGS = [ssoSettings, alertsSettings, linkcheckSettings] as const

type Settings = (typeof SERVICE_SETTINGS)[number]

type NamesOf<List extends ReadonlyArray<{ readonly name: string }>> = { readonly [K in keyof List]: List[K]["name"] }
const namesOf = <const List extends ReadonlyArray<{ readonly name: string }>>(list: List) =>
  list.map(({ name }) => name) as unknown as NamesOf<List>

export const SERVICE_NAMES = namesOf(SERVICE_SETTINGS)
export type ServiceName = Settings["name"]

type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never

/** Every service's sections of the server's configuration (`sso`, `alerts` and `email`, `linkcheck`). */
export type ServiceSections = Intersection<Config.Config.Success<ReturnType<Settings["config"]>>>

/**
 * Every service this server knows, whether this copy serves it or not. The single sign-on's services are built once
 * per copy that needs them: for its own routes and workers, and to check the callers of the other services' APIs.
 */
export const allSlots = (config: ServerConfig): ReadonlyArray<ServiceSlot> => {
  const sso = ssoServiceLayer(config)
  const shared = { accessFor: callersCheckedBySso(sso) }
  return [ssoSlot(config, sso), alertsSlot(config, shared), linkcheckSlot(config, shared)]
}
