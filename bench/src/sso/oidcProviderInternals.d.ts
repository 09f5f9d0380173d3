// Deep modules of oidc-provider 9 that its types do not describe: its memory adapter's storage and the LRU map it uses.
declare module "oidc-provider/lib/helpers/lru.js" {
  export default class LRU {
    constructor(options: { maxSize: number })
  }
}

declare module "oidc-provider/lib/adapters/memory_adapter.js" {
  import type { Adapter } from "oidc-provider"
  export default class MemoryAdapter implements Adapter {
    constructor(model: string, store: unknown, clockTolerance?: number)
    upsert: Adapter["upsert"]
    find: Adapter["find"]
    findByUserCode: Adapter["findByUserCode"]
    findByUid: Adapter["findByUid"]
    consume: Adapter["consume"]
    destroy: Adapter["destroy"]
    revokeByGrantId: Adapter["revokeByGrantId"]
  }
}
