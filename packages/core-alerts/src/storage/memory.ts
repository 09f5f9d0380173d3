import { Layer } from "effect"
import type { AlertsStore } from "./AlertsStore"
import type { EmailStore } from "./EmailStore"
import { emailsMemory } from "./memory/emails"
import { subscriptionsMemory } from "./memory/subscriptions"

/** Both stores in this process: the email store reads the rows of the alerts store it is built with. */
export const layerMemory = (): Layer.Layer<AlertsStore | EmailStore> => Layer.provideMerge(emailsMemory, subscriptionsMemory)
