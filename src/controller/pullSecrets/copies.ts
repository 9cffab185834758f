import type { ReferenceObject } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { jitterSeconds } from "../jitter.ts"

export const copyLabel = "preheat.kruise.io/secret-copy"
export const sourceNamespaceAnnotation = "preheat.kruise.io/source-namespace"
export const sourceNameAnnotation = "preheat.kruise.io/source-name"
export const sourceUidAnnotation = "preheat.kruise.io/source-uid"
export const referencedByAnnotation = "preheat.kruise.io/referenced-by"

export const pullSecretTypes = ["kubernetes.io/dockerconfigjson", "kubernetes.io/dockercfg"] as const

/**
 * The copy of `namespace/name` in the daemon's namespace. `.` cannot appear in a namespace, so
 * `namespace.name` is unambiguous; names that would pass 253 characters end in a hash instead.
 */
export const copyName = (namespace: string, name: string): string => {
  const full = `${namespace}.${name}`
  if (full.length <= 253) return full
  const hash = (jitterSeconds(full, 0, 0x7fffffff) >>> 0).toString(36)
  return `${full.slice(0, 252 - hash.length)}-${hash}`
}

/** What a NodeImage's image entry holds to point the daemon at the copy of `namespace/name`. */
export const copyReference = (secretNamespace: string, namespace: string, name: string): ReferenceObject => ({
  namespace: secretNamespace,
  name: copyName(namespace, name)
})

export interface SecretReference {
  readonly namespace: string
  readonly name: string
  /** The jobs (namespace/name) that reference it. */
  readonly jobs: ReadonlyArray<string>
}

export interface CopyPlan {
  readonly create: ReadonlyArray<KubeObject>
  readonly update: ReadonlyArray<KubeObject>
  readonly delete: ReadonlyArray<string>
}

const sameData = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {})

/**
 * The copies the daemon may read (SPEC §2 Pull secrets): one per referenced source secret of a
 * pull-secret type, its data kept equal to the source's, annotated with where it came from and
 * who uses it; copies nobody references any more are deleted.
 */
export const planCopies = (
  references: ReadonlyArray<SecretReference>,
  source: (namespace: string, name: string) => KubeObject | undefined,
  copies: ReadonlyArray<KubeObject>,
  copyNamespace: string
): CopyPlan => {
  const existing = new Map(copies.map((c) => [c.metadata.name ?? "", c]))
  const wanted = new Set<string>()
  const create: Array<KubeObject> = []
  const update: Array<KubeObject> = []
  for (const ref of references) {
    const secret = source(ref.namespace, ref.name)
    const type = secret?.["type"]
    if (secret === undefined || !(pullSecretTypes as ReadonlyArray<unknown>).includes(type)) continue
    const name = copyName(ref.namespace, ref.name)
    wanted.add(name)
    const annotations = {
      [sourceNamespaceAnnotation]: ref.namespace,
      [sourceNameAnnotation]: ref.name,
      [sourceUidAnnotation]: secret.metadata.uid ?? "",
      [referencedByAnnotation]: [...ref.jobs].sort().join(",")
    }
    const desired: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name,
        namespace: copyNamespace,
        labels: { [copyLabel]: "true", "app.kubernetes.io/managed-by": "preheat" },
        annotations
      },
      type,
      data: secret["data"] ?? {}
    }
    const current = existing.get(name)
    if (current === undefined) create.push(desired)
    else if (
      current["type"] !== type ||
      !sameData(current["data"], desired["data"]) ||
      !sameData(current.metadata.annotations, annotations)
    ) {
      update.push({ ...desired, metadata: { ...current.metadata, annotations } })
    }
  }
  const remove = copies.filter((c) => !wanted.has(c.metadata.name ?? "")).map((c) => c.metadata.name ?? "")
  return { create, update, delete: remove }
}

export type SecretProblem = { readonly reason: "PullSecretNotFound" | "PullSecretInvalidType"; readonly message: string }

/** Why a job's pull secret cannot be used, in words for its Valid condition (none when usable). */
export const secretProblem = (namespace: string, name: string, secret: KubeObject | undefined): SecretProblem | undefined => {
  if (secret === undefined) return { reason: "PullSecretNotFound", message: `pull secret ${namespace}/${name} not found` }
  const type = secret["type"]
  if ((pullSecretTypes as ReadonlyArray<unknown>).includes(type)) return undefined
  return {
    reason: "PullSecretInvalidType",
    message: `pull secret ${namespace}/${name} has type ${String(type)}, want ${pullSecretTypes.join(" or ")}`
  }
}
