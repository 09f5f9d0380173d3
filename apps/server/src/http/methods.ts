import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"

/** A path of the API (`/batch/:id`), split in segments; `:name` matches any one segment. */
interface Route {
  readonly template: string
  readonly segments: ReadonlyArray<string>
  readonly methods: Set<string>
}

const segmentsOf = (path: string) => path.split("/").filter((segment) => segment !== "")

const literalSegments = (route: Route) => route.segments.filter((segment) => !segment.startsWith(":")).length

/**
 * The paths of `api`, from its endpoints: the methods each answers (HEAD goes with GET), so that a wrong method on a
 * known path is told apart from an unknown path, and the template a request path matches, which names its route in
 * the metrics. `otherGetPaths` are paths the host serves beside the API (`/metrics`, `/docs/assets/:file`).
 */
export const routeTable = (
  api: HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.Any, any, any>,
  otherGetPaths: ReadonlyArray<string> = []
) => {
  const routes = new Map<string, Route>()
  const add = (path: string, method: string) => {
    const route = routes.get(path) ?? { template: path, segments: segmentsOf(path), methods: new Set<string>() }
    route.methods.add(method)
    if (method === "GET") route.methods.add("HEAD")
    routes.set(path, route)
  }
  HttpApi.reflect(api, { onGroup: () => undefined, onEndpoint: ({ endpoint }) => add(endpoint.path, endpoint.method) })
  for (const path of otherGetPaths) add(path, "GET")
  // by length, as every answer looks its path up; the most literal template first: `/subscriber-lists/bulk` rather
  // than `/subscriber-lists/:slug`
  const byLength = new Map<number, Array<Route>>()
  for (const route of [...routes.values()].sort((a, b) => literalSegments(b) - literalSegments(a))) {
    byLength.set(route.segments.length, [...(byLength.get(route.segments.length) ?? []), route])
  }
  const matching = (path: string) => {
    const segments = segmentsOf(path)
    return (byLength.get(segments.length) ?? []).filter((route) =>
      route.segments.every((segment, index) => segment.startsWith(":") || segment === segments[index])
    )
  }

  return {
    /** The methods `path` answers, in a stable order; empty when no endpoint has that path. */
    methodsOf: (path: string): ReadonlyArray<string> =>
      [...new Set(matching(path).flatMap((route) => [...route.methods]))].sort(),
    /** The template `path` matches (`/batch/:id`), or undefined when no endpoint has that path. */
    templateOf: (path: string): string | undefined => matching(path)[0]?.template
  }
}
