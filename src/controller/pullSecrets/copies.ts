import { Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { ReferenceObject } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { Stored } from "../../kube/store.ts"
import { jitterSeconds } from "../jitter.ts"
import type { Decoded } from "../stores.ts"

export const copyLabel = "preheat.kruise.io/secret-copy"
const sourceNamespaceAnnotation = "preheat.kruise.io/source-namespace"
const sourceNameAnnotation = "preheat.kruise.io/source-name"
const sourceUidAnnotation = "preheat.kruise.io/source-uid"
const referencedByAnnotation = "preheat.kruise.io/referenced-by"

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

/**
 * The job, when it still needs the copies of its pull secrets: alive, valid and unfinished. A
 * finished job (an Always job completed or past its deadline) releases them, as upstream does, so
 * no node can read a credential longer than the pulls need it; deleting a job releases them too.
 */
export const holdingCopies = (job: Stored<Decoded<ImagePullJob>> | undefined): ImagePullJob | undefined => {
  if (job === undefined || job.raw.metadata.deletionTimestamp !== undefined || Result.isFailure(job.view)) return undefined
  return job.view.success.status?.completionTime === undefined ? job.view.success : undefined
}

/**
 * The copies a job's tasks point at, as its reconcile writes them: those of its pull secrets that
 * are usable docker configs, none once it finished. Undefined while a secret has not been read
 * yet (after a restart): the caller then keeps what is written.
 */
export const copiesOfJob = (
  job: Stored<Decoded<ImagePullJob>> | undefined,
  copyNamespace: string,
  secrets: { readonly has: (namespace: string, name: string) => boolean; readonly usable: (namespace: string, name: string) => unknown }
): ReadonlyArray<ReferenceObject> | undefined => {
  if (job === undefined || Result.isFailure(job.view)) return undefined
  if (holdingCopies(job) === undefined) return []
  const namespace = job.raw.metadata.namespace ?? ""
  const refs: Array<ReferenceObject> = []
  for (const name of job.view.success.spec.pullSecrets ?? []) {
    if (!secrets.has(namespace, name)) return undefined
    if (secrets.usable(namespace, name) !== undefined) refs.push(copyReference(copyNamespace, namespace, name))
  }
  return refs
}

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
 * The copies the daemon may read (SPEC §2 Pull secrets): one per referenced source secret that
 * `source` gives (the caller's: those of a pull-secret type holding a usable docker config), its
 * data kept equal to the source's, annotated with where it came from and which unfinished jobs
 * use it; copies nobody references any more, or whose source is gone or unusable, are deleted.
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
