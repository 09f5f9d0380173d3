import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"

/** A path of the API (`/batch/:id`), split in segments; `:name` matches any one segment. */
interface Route {
  readonly segments: ReadonlyArray<string>
  readonly methods: Set<string>
}

const segmentsOf = (path: string) => path.split("/").filter((segment) => segment !== "")

/**
 * The methods each path of `api` answers, from its endpoints, so that a wrong method on a known path is told apart
 * from an unknown path. HEAD goes with GET.
 */
export const methodTable = (api: HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.Any, any, any>) => {
  const routes = new Map<string, Route>()
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint }) => {
      const route = routes.get(endpoint.path) ?? { segments: segmentsOf(endpoint.path), methods: new Set<string>() }
      route.methods.add(endpoint.method)
      if (endpoint.method === "GET") route.methods.add("HEAD")
      routes.set(endpoint.path, route)
    }
  })
  const matches = (route: Route, segments: ReadonlyArray<string>) =>
    route.segments.length === segments.length &&
    route.segments.every((segment, index) => segment.startsWith(":") || segment === segments[index])

  /** The methods `path` answers, in a stable order; empty when no endpoint has that path. */
  return (path: string): ReadonlyArray<string> => {
    const segments = segmentsOf(path)
    const methods = new Set<string>()
    for (const route of routes.values()) {
      if (matches(route, segments)) route.methods.forEach((method) => methods.add(method))
    }
    return [...methods].sort()
  }
}
