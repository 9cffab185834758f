import { describe, expect, it } from "vitest"
import { routeOf } from "../../../../harness/apiserver/http/requestRoute.ts"

const resource = (path: string) => {
  const route = routeOf(path)
  return route._tag === "Resource"
    ? {
        kind: route.kind.resource.kind,
        namespace: route.namespace,
        name: route.name,
        subresource: route.subresource,
        watchPrefix: route.watchPrefix
      }
    : route._tag
}

describe("request routes", () => {
  it.each([
    ["/api/v1/namespaces", { kind: "Namespace", namespace: undefined, name: undefined, subresource: undefined, watchPrefix: false }],
    ["/api/v1/namespaces/a", { kind: "Namespace", namespace: undefined, name: "a", subresource: undefined, watchPrefix: false }],
    ["/api/v1/namespaces/a/status", { kind: "Namespace", namespace: undefined, name: "a", subresource: "status", watchPrefix: false }],
    ["/api/v1/namespaces/a/finalize", { kind: "Namespace", namespace: undefined, name: "a", subresource: "finalize", watchPrefix: false }],
    ["/api/v1/namespaces/a/pods/p/status", { kind: "Pod", namespace: "a", name: "p", subresource: "status", watchPrefix: false }],
    ["/api/v1/pods", { kind: "Pod", namespace: undefined, name: undefined, subresource: undefined, watchPrefix: false }],
    ["/api/v1/watch/namespaces/a/secrets", { kind: "Secret", namespace: "a", name: undefined, subresource: undefined, watchPrefix: true }],
    [
      "/apis/apps.kruise.io/v1alpha1/nodeimages/n",
      { kind: "NodeImage", namespace: undefined, name: "n", subresource: undefined, watchPrefix: false }
    ],
    [
      "/apis/coordination.k8s.io/v1/namespaces/x/leases/l",
      { kind: "Lease", namespace: "x", name: "l", subresource: undefined, watchPrefix: false }
    ]
  ])("%s", (path, expected) => {
    expect(resource(path)).toEqual(expected)
  })

  it.each([
    ["/apis/apps.kruise.io/v1alpha1/namespaces/a/nodeimages", "NotFound"],
    ["/api/v1/secrets/s/status", "NotFound"],
    ["/api/v1/widgets", "NotFound"],
    ["/api/v2", "NotFound"],
    ["/api", "ApiVersions"],
    ["/api/v1", "ResourceList"],
    ["/apis", "GroupList"],
    ["/apis/apps.kruise.io", "Group"],
    ["/openapi/v3", "OpenApiRoot"],
    ["/openapi/v3/apis/apps.kruise.io/v1alpha1", "OpenApiDocument"],
    ["/version", "Version"],
    ["/livez", "Health"]
  ])("%s is %s", (path, tag) => {
    expect(resource(path)).toBe(tag)
  })
})
