// Which part of the API a request path names, as kube-apiserver's path layout defines it.
import { authorizationGroup, authorizationVersion, findReview } from "./accessReviews.ts"
import type { ReviewResource } from "./accessReviews.ts"
import type { ServedKind } from "../catalog.ts"
import { findKind } from "../catalog.ts"

export type Route =
  | { readonly _tag: "Version" }
  | { readonly _tag: "Health" }
  | { readonly _tag: "ApiVersions" }
  | { readonly _tag: "GroupList" }
  | { readonly _tag: "Group"; readonly group: string }
  | { readonly _tag: "ResourceList"; readonly group: string; readonly version: string }
  | { readonly _tag: "OpenApiRoot" }
  | { readonly _tag: "OpenApiDocument"; readonly path: string }
  | {
      readonly _tag: "Resource"
      readonly kind: ServedKind
      readonly namespace: string | undefined
      readonly name: string | undefined
      readonly subresource: string | undefined
      /** The deprecated `/watch/` path prefix: a watch whatever the query says. */
      readonly watchPrefix: boolean
    }
  | { readonly _tag: "Review"; readonly review: ReviewResource }
  | { readonly _tag: "NotFound" }

const notFound: Route = { _tag: "NotFound" }

const namespaceSubresources: ReadonlySet<string> = new Set(["status", "finalize"])

const resourceRoute = (group: string, version: string, segments: ReadonlyArray<string>): Route => {
  let rest = segments
  const watchPrefix = rest[0] === "watch"
  if (watchPrefix) rest = rest.slice(1)
  let namespace: string | undefined
  // /namespaces/<ns>/<plural>...: a namespaced resource (but /namespaces/<name>/status is the
  // namespace's own subresource).
  if (group === "" && rest[0] === "namespaces" && rest.length >= 3 && !namespaceSubresources.has(rest[2]!)) {
    namespace = rest[1]
    rest = rest.slice(2)
  } else if (group !== "" && rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  const [plural, name, subresource, ...extra] = rest
  if (plural === undefined || extra.length > 0) return notFound
  const kind = findKind(group, version, plural)
  if (kind === undefined) return notFound
  if (namespace !== undefined && !kind.resource.namespaced) return notFound
  if (subresource !== undefined) {
    const served =
      (subresource === "status" && kind.statusSubresource) || (subresource === "finalize" && kind.resource.kind === "Namespace")
    if (!served) return notFound
  }
  if (name === "") return notFound
  return { _tag: "Resource", kind, namespace, name, subresource, watchPrefix }
}

export const routeOf = (pathname: string): Route => {
  const segments = pathname
    .split("/")
    .slice(1)
    .map((s) => decodeURIComponent(s))
  if (segments[segments.length - 1] === "" && segments.length > 1) segments.pop()
  const [first, second, third, ...rest] = segments
  switch (first) {
    case "version":
      return segments.length === 1 ? { _tag: "Version" } : notFound
    case "healthz":
    case "livez":
    case "readyz":
      return { _tag: "Health" }
    case "openapi":
      if (second !== "v3") return notFound
      return third === undefined ? { _tag: "OpenApiRoot" } : { _tag: "OpenApiDocument", path: [third, ...rest].join("/") }
    case "api":
      if (second === undefined) return { _tag: "ApiVersions" }
      if (second !== "v1") return notFound
      return third === undefined ? { _tag: "ResourceList", group: "", version: "v1" } : resourceRoute("", "v1", [third, ...rest])
    case "apis":
      if (second === undefined) return { _tag: "GroupList" }
      if (third === undefined) return { _tag: "Group", group: second }
      if (rest.length === 0) return { _tag: "ResourceList", group: second, version: third }
      if (second === authorizationGroup && third === authorizationVersion) {
        const review = rest.length === 1 ? findReview(rest[0]!) : undefined
        return review === undefined ? notFound : { _tag: "Review", review }
      }
      return resourceRoute(second, third, rest)
    default:
      return notFound
  }
}
