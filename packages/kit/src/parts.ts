import type { Context } from "effect"

/**
 * What every core builds once, in its `layerSql` or `layerMemory`, and shares between its services and its workers:
 * the settings it was built with, its store and the job queue. Each core's parts add what is its own.
 */
export interface CoreParts<
  Settings,
  Store extends Context.TagClassShape<any, any>,
  Jobs extends Context.TagClassShape<any, any>
> {
  readonly settings: Settings
  readonly store: Context.Tag.Service<Store>
  readonly jobs: Context.Tag.Service<Jobs>
}
