// Namespaces as kube-apiserver and its namespace controller treat them: content is created only in
// a namespace that exists and is not being deleted, and deleting a namespace deletes its content
// (waiting for the content's finalizers) before the namespace itself goes.
import { Effect } from "effect"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import { ApiFailure, fromKubeError } from "../http/apiStatus.ts"
import { servedKinds } from "../catalog.ts"
import type { ServedKind } from "../catalog.ts"
import { qualifiedResource } from "../kindRules.ts"
import { quote } from "../storage/storeErrors.ts"

/** The namespaces every cluster starts with. */
export const initialNamespaces = ["default", "kube-node-lease", "kube-public", "kube-system"]

/** Why a create into `namespace` (as found in the store) is refused: it is being deleted (403). */
export const terminatingRefusal = (kind: ServedKind, namespace: KubeObject, name: string): ApiFailure | undefined => {
  if (namespace.metadata.deletionTimestamp === undefined) return undefined
  const namespaceName = namespace.metadata.name ?? ""
  return new ApiFailure({
    code: 403,
    reason: "Forbidden",
    message: `${qualifiedResource(kind.resource)} ${quote(name)} is forbidden: unable to create new content in namespace ${namespaceName} because it is being terminated`,
    details: {
      name,
      group: kind.group,
      kind: kind.resource.plural,
      causes: [{ reason: "NamespaceTerminating", message: `namespace ${namespaceName} is being terminated`, field: "metadata.namespace" }]
    }
  })
}

/** Fails a create into a namespace that does not exist (404) or is being deleted (403). */
export const admitIntoNamespace = (kind: ServedKind, namespace: string, name: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const found = yield* api.get(resources.namespace, { name: namespace }).pipe(Effect.mapError((error) => fromKubeError(kind, error)))
    const refused = terminatingRefusal(kind, found, name)
    if (refused !== undefined) return yield* Effect.fail(refused)
  })

// The namespaces a cluster cannot work without: a real server refuses to delete them.
const undeletable: ReadonlySet<string> = new Set(initialNamespaces.filter((n) => n !== "kube-node-lease"))

/** Why a namespace may not be deleted at all, if it may not. */
export const namespaceDeletionRefusal = (kind: ServedKind, name: string): ApiFailure | undefined =>
  kind.resource.kind === "Namespace" && kind.group === "" && undeletable.has(name)
    ? new ApiFailure({
        code: 403,
        reason: "Forbidden",
        message: `namespaces ${JSON.stringify(name)} is forbidden: this namespace may not be deleted`,
        details: { name, kind: "namespaces" }
      })
    : undefined

const namespacedKinds = servedKinds.filter((k) => k.resource.namespaced)

// One step of emptying a terminating namespace: delete what is left; once nothing is left,
// release the namespace's `kubernetes` finalizer, which lets the store remove it.
const emptyNamespace = (namespace: KubeObject) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const name = namespace.metadata.name ?? ""
    let remaining = 0
    for (const kind of namespacedKinds) {
      const { items } = yield* api.list(kind.resource, { namespace: name })
      remaining += items.length
      for (const item of items) {
        if (item.metadata.deletionTimestamp !== undefined) continue
        yield* api.delete(kind.resource, { name: item.metadata.name ?? "", namespace: name }).pipe(Effect.ignore)
      }
    }
    if (remaining === 0) {
      yield* api.patch(resources.namespace, { name }, { spec: { finalizers: null } }).pipe(Effect.ignore)
    }
  })

/** The namespace controller: runs until interrupted. */
export const namespaceController = (interval = "200 millis" as const) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    for (;;) {
      const { items } = yield* api.list(resources.namespace).pipe(Effect.orElseSucceed(() => ({ items: [] as ReadonlyArray<KubeObject> })))
      for (const namespace of items) {
        if (namespace.metadata.deletionTimestamp !== undefined) yield* emptyNamespace(namespace).pipe(Effect.ignore)
      }
      yield* Effect.sleep(interval)
    }
  })
