// API discovery: what kubectl reads first to map `ipj` to a resource and a path. Both forms are
// served: the aggregated apidiscovery.k8s.io/v2 document (one request for /api, one for /apis) and
// the legacy APIVersions, APIGroupList and per group-version APIResourceList.
import { authorizationGroup, authorizationVersion, reviewResources } from "./accessReviews.ts"
import type { ServedKind } from "../catalog.ts"
import { groupVersions } from "../catalog.ts"

const verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
const statusVerbs = ["get", "patch", "update"]

const groupVersion = (group: string, version: string): string => (group === "" ? version : `${group}/${version}`)

const subresources = (kind: ServedKind): ReadonlyArray<string> => [
  ...(kind.statusSubresource ? ["status"] : []),
  ...(kind.resource.kind === "Namespace" ? ["finalize"] : [])
]
const subresourceVerbs = (subresource: string): ReadonlyArray<string> => (subresource === "finalize" ? ["update"] : statusVerbs)

const withLists = (field: string, values: ReadonlyArray<string>) => (values.length === 0 ? {} : { [field]: values })

/** /api: the legacy core group's versions, and where clients reach this server. */
export const apiVersions = (serverAddress: string) => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }]
})

const namedGroups = () => {
  const groups = new Map<string, Array<string>>()
  for (const { group, version } of groupVersions()) {
    if (group === "") continue
    groups.set(group, [...(groups.get(group) ?? []), version])
  }
  groups.set(authorizationGroup, [authorizationVersion])
  return [...groups].map(([name, versions]) => {
    const entries = versions.map((version) => ({ groupVersion: groupVersion(name, version), version }))
    return { name, versions: entries, preferredVersion: entries[0]! }
  })
}

/** /apis: the named groups. */
export const apiGroupList = () => ({ kind: "APIGroupList", apiVersion: "v1", groups: namedGroups() })

/** /apis/<group>, or undefined when this server does not serve the group. */
export const apiGroup = (name: string) => {
  const group = namedGroups().find((g) => g.name === name)
  return group === undefined ? undefined : { kind: "APIGroup", apiVersion: "v1", ...group }
}

/** /api/v1 or /apis/<group>/<version>: the resources of one group version. */
// The access reviews: create-only, cluster-scoped, as kube-apiserver lists them.
const reviewList = () => ({
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion: groupVersion(authorizationGroup, authorizationVersion),
  resources: reviewResources.map((r) => ({ name: r.plural, singularName: r.singular, namespaced: false, kind: r.kind, verbs: ["create"] }))
})

const reviewDiscovery = () => ({
  metadata: { name: authorizationGroup },
  versions: [
    {
      version: authorizationVersion,
      resources: reviewResources.map((r) => ({
        resource: r.plural,
        responseKind: { group: authorizationGroup, version: authorizationVersion, kind: r.kind },
        scope: "Cluster",
        singularResource: r.singular,
        verbs: ["create"]
      })),
      freshness: "Current"
    }
  ]
})

export const apiResourceList = (group: string, version: string) => {
  if (group === authorizationGroup && version === authorizationVersion) return reviewList()
  const entry = groupVersions().find((g) => g.group === group && g.version === version)
  if (entry === undefined) return undefined
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: groupVersion(group, version),
    resources: entry.kinds.flatMap((kind) => [
      {
        name: kind.resource.plural,
        singularName: kind.singular,
        namespaced: kind.resource.namespaced,
        kind: kind.resource.kind,
        verbs,
        ...withLists("shortNames", kind.shortNames),
        ...withLists("categories", kind.categories)
      },
      ...subresources(kind).map((sub) => ({
        name: `${kind.resource.plural}/${sub}`,
        singularName: "",
        namespaced: kind.resource.namespaced,
        kind: kind.resource.kind,
        verbs: subresourceVerbs(sub)
      }))
    ])
  }
}

/** The aggregated discovery document of the core group (`/api`) or of the named groups (`/apis`). */
export const aggregatedDiscovery = (core: boolean) => {
  const groups = new Map<string, Array<{ version: string; kinds: ReadonlyArray<ServedKind> }>>()
  for (const { group, version, kinds } of groupVersions()) {
    if ((group === "") !== core) continue
    groups.set(group, [...(groups.get(group) ?? []), { version, kinds }])
  }
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2",
    metadata: {},
    items: [
      ...[...groups].map(([group, versions]) => ({
        metadata: group === "" ? {} : { name: group },
        versions: versions.map(({ version, kinds }) => ({
          version,
          resources: kinds.map((kind) => {
            const responseKind = { group, version, kind: kind.resource.kind }
            return {
              resource: kind.resource.plural,
              responseKind,
              scope: kind.resource.namespaced ? "Namespaced" : "Cluster",
              singularResource: kind.singular,
              verbs,
              ...withLists("shortNames", kind.shortNames),
              ...withLists("categories", kind.categories),
              ...(subresources(kind).length === 0
                ? {}
                : {
                    subresources: subresources(kind).map((subresource) => ({
                      subresource,
                      responseKind,
                      verbs: subresourceVerbs(subresource)
                    }))
                  })
            }
          }),
          freshness: "Current"
        }))
      })),
      ...(core ? [] : [reviewDiscovery()])
    ]
  }
}
