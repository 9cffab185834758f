import type { KubeObject } from "./KubeApi.ts"

/** `namespace/name`, or `name` for cluster-scoped objects: the key stores and work queues use. */
export const objectKey = (object: KubeObject): string => keyOf(object.metadata.namespace, object.metadata.name ?? "")

export const keyOf = (namespace: string | undefined, name: string): string =>
  namespace === undefined || namespace === "" ? name : `${namespace}/${name}`

export const splitKey = (key: string): { readonly namespace?: string; readonly name: string } => {
  const slash = key.indexOf("/")
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

/**
 * Whether `a` is a later state of the object than `b`. resourceVersions are opaque to clients in
 * principle, but every server (etcd revisions, ours) issues increasing integers; this only guards
 * the store against an older watch event overwriting our own newer write.
 */
export const isNewer = (a: KubeObject, b: KubeObject): boolean => {
  const ra = Number(a.metadata.resourceVersion)
  const rb = Number(b.metadata.resourceVersion)
  return Number.isFinite(ra) && Number.isFinite(rb) ? ra > rb : a.metadata.resourceVersion !== b.metadata.resourceVersion
}
