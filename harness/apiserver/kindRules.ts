// What the store does differently per kind, as kube-apiserver's registry strategies do.
import { storageVersion } from "../../src/api/references.ts"
import type { Resource } from "../../src/kube/resources.ts"
import { resources } from "../../src/kube/resources.ts"

export const groupOf = (resource: Resource): string =>
  resource.apiVersion.includes("/") ? resource.apiVersion.slice(0, resource.apiVersion.indexOf("/")) : ""

/** A kind whatever version it is served at: every version of a kind shares one storage. */
export const kindId = (resource: Resource): string => `${groupOf(resource)}/${resource.kind}`

/**
 * apiextensions.k8s.io's CustomResourceDefinitions: this server serves the custom kinds' own
 * (servedDefinitions.ts), and no others.
 */
export const customResourceDefinitions: Resource = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false
}

const statusSubresourceKinds: ReadonlySet<string> = new Set(
  [
    customResourceDefinitions,
    resources.imagePullJob,
    resources.imageListPullJob,
    resources.advancedCronJob,
    resources.nodeImage,
    resources.node,
    resources.pod,
    resources.namespace,
    resources.deployment,
    resources.statefulSet,
    resources.daemonSet,
    resources.replicaSet
  ].map(kindId)
)

export const hasStatusSubresource = (resource: Resource): boolean => statusSubresourceKinds.has(kindId(resource))

export const versionOf = (resource: Resource): string => resource.apiVersion.slice(resource.apiVersion.indexOf("/") + 1)

/**
 * The apiVersion an object of this kind is stored with, whichever version it was written in: the
 * custom kinds' newest, as upstream's CRDs say (storage: true).
 */
export const storedApiVersion = (resource: Resource): string =>
  isCustomResource(resource) ? `${groupOf(resource)}/${storageVersion}` : resource.apiVersion

/** Custom resources (a dotted group outside *.k8s.io) refuse unconditional updates; built-ins allow them. */
export const isCustomResource = (resource: Resource): boolean => {
  const group = groupOf(resource)
  return group.includes(".") && !group.endsWith(".k8s.io")
}

/** `imagepulljobs.apps.kruise.io`, `pods`: how messages name a resource. */
export const qualifiedResource = (resource: Resource): string => {
  const group = groupOf(resource)
  return group === "" ? resource.plural : `${resource.plural}.${group}`
}

const isNamespace = (resource: Resource): boolean => kindId(resource) === kindId(resources.namespace)
const isPod = (resource: Resource): boolean => kindId(resource) === kindId(resources.pod)

/**
 * The server's part of a new object's body. Custom resources start without status (it is written
 * through /status); Pods start Pending; a Namespace is Active and carries the label naming it (as
 * since Kubernetes 1.21).
 */
export const createdBody = (resource: Resource, candidate: Record<string, unknown>, name: string): void => {
  if (hasStatusSubresource(resource) && isCustomResource(resource)) delete candidate["status"]
  if (isPod(resource)) candidate["status"] = { phase: "Pending" }
  if (isNamespace(resource)) {
    const metadata = candidate["metadata"] as Record<string, unknown>
    const labels = (metadata["labels"] ?? {}) as Record<string, string>
    metadata["labels"] = { ...labels, "kubernetes.io/metadata.name": name }
    candidate["status"] = { phase: "Active" }
  }
}

/**
 * What holds an object back from deletion: its finalizers, and for a Namespace also
 * spec.finalizers (which the namespace lifecycle releases once the namespace is empty).
 */
export const pendingFinalizers = (
  resource: Resource,
  object: { readonly metadata: { readonly finalizers?: ReadonlyArray<string> }; readonly [k: string]: unknown }
): number => {
  const own = object.metadata.finalizers?.length ?? 0
  if (!isNamespace(resource)) return own
  const spec = object["spec"] as { readonly finalizers?: ReadonlyArray<string> } | undefined
  return own + (spec?.finalizers?.length ?? 0)
}

/** Status fields a deletion mark sets: a Namespace being deleted is Terminating. */
export const deletionStatus = (resource: Resource, status: unknown): unknown =>
  isNamespace(resource) ? { ...(status as object | undefined), phase: "Terminating" } : status
