// REST paths of kube-apiserver: core kinds under /api/v1, grouped kinds under /apis/<group>/<version>.
import type { Subresource } from "../../../src/kube/KubeApi.ts"
import type { Resource } from "../../../src/kube/resources.ts"

const groupVersionPrefix = (resource: Resource): string =>
  resource.apiVersion.includes("/") ? `/apis/${resource.apiVersion}` : `/api/${resource.apiVersion}`

/** The kind's collection: in one namespace, or across all of them (and for cluster-scoped kinds). */
export const collectionPath = (resource: Resource, namespace: string | undefined): string => {
  const scope = resource.namespaced && namespace !== undefined && namespace !== "" ? `/namespaces/${encodeURIComponent(namespace)}` : ""
  return `${groupVersionPrefix(resource)}${scope}/${resource.plural}`
}

/** One object, or its status subresource. */
export const objectPath = (resource: Resource, namespace: string | undefined, name: string, subresource: Subresource = "main"): string => {
  const base = `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}`
  return subresource === "status" ? `${base}/status` : base
}
