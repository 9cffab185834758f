import { Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { ReferenceObject } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { keyOf } from "../../kube/objectKey.ts"
import type { Stored } from "../../kube/store.ts"
import { jitterSeconds } from "../jitter.ts"
import type { Decoded } from "../stores.ts"

const copyLabel = "preheat.kruise.io/secret-copy"
const sourceNamespaceAnnotation = "preheat.kruise.io/source-namespace"
const sourceNameAnnotation = "preheat.kruise.io/source-name"
const sourceUidAnnotation = "preheat.kruise.io/source-uid"
const referencedByAnnotation = "preheat.kruise.io/referenced-by"
/**
 * Upstream's bookkeeping on its copies (OpenKruise pkg/controller/imagepulljob/imagepulljob_controller.go,
 * generateSyncedSecret and claimImagePullJobSecrets): the source as `namespace/name`, the jobs using the
 * copy as sorted `namespace/name` joined by commas, and `batch` for copies cleaned up with their images.
 * preheat's copies carry them too, so tools (and upstream itself) reading upstream's format find them.
 */
const upstreamSourceKeyAnnotation = "imagepulljobs.kruise.io/source-key"
const upstreamReferencesAnnotation = "imagepulljobs.kruise.io/references"
const upstreamModeAnnotation = "imagepulljobs.kruise.io/mode"

const pullSecretTypes = ["kubernetes.io/dockerconfigjson", "kubernetes.io/dockercfg"] as const

/** Whether a Secret's type is one a pull secret may have. */
export const isPullSecretType = (type: unknown): boolean => (pullSecretTypes as ReadonlyArray<unknown>).includes(type)

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

/**
 * Whether a Secret of the copies' namespace is a copy the controller looks after: one of its own
 * (its label), or one OpenKruise's controller left there (upstream's source annotation, which every
 * upstream version has written: both `name-xxxxxx` and the older generateName copies).
 */
export const isCopy = (secret: KubeObject): boolean =>
  secret.metadata.labels?.[copyLabel] === "true" || secret.metadata.annotations?.[upstreamSourceKeyAnnotation] !== undefined

/** The source secret (namespace/name) of a copy, preheat's or OpenKruise's: both write upstream's source key. */
export const sourceOfCopy = (copy: KubeObject): string | undefined => copy.metadata.annotations?.[upstreamSourceKeyAnnotation]

const isOwnCopy = (secret: KubeObject): boolean => secret.metadata.labels?.[copyLabel] === "true"

/** Upstream's `namespace/name` list, as its getReferencingJobsFromSecret reads it (empty entries skipped). */
const upstreamReferences = (copy: KubeObject): ReadonlyArray<string> =>
  (copy.metadata.annotations?.[upstreamReferencesAnnotation] ?? "").split(",").filter((ref) => ref !== "")

export interface CopyPlan {
  readonly create: ReadonlyArray<KubeObject>
  readonly update: ReadonlyArray<KubeObject>
  readonly delete: ReadonlyArray<string>
}

const sameData = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {})

/** Key by key: an API server may give the keys back in another order (Go sorts a map's keys). */
const sameAnnotations = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean => {
  const keys = Object.keys(a ?? {})
  return keys.length === Object.keys(b).length && keys.every((k) => a?.[k] === b[k])
}

/** Whether a copy already holds its source's type and data and these annotations. */
const current = (copy: KubeObject, type: unknown, source: KubeObject, annotations: Readonly<Record<string, string>>): boolean =>
  copy["type"] === type && sameData(copy["data"], source["data"]) && sameAnnotations(copy.metadata.annotations, annotations)

/**
 * The copies the daemon may read (SPEC §2 Pull secrets): one per referenced source secret that
 * `source` gives (the caller's: those of a pull-secret type holding a usable docker config), its
 * data kept equal to the source's, annotated with where it came from and which unfinished jobs
 * use it; copies nobody references any more, or whose source is gone or unusable, are deleted.
 *
 * Copies OpenKruise's controller left (`isCopy`, without preheat's label: a cluster that migrated)
 * live by the same rule, judged by upstream's own bookkeeping: kept in sync while an unfinished job
 * that its references annotation names still uses its source, that annotation narrowed to those
 * jobs as upstream would on release; deleted once none is left. New jobs get preheat's copies.
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
    if (secret === undefined || !isPullSecretType(type)) continue
    const name = copyName(ref.namespace, ref.name)
    wanted.add(name)
    const jobs = [...ref.jobs].sort().join(",")
    const annotations = {
      [sourceNamespaceAnnotation]: ref.namespace,
      [sourceNameAnnotation]: ref.name,
      [sourceUidAnnotation]: secret.metadata.uid ?? "",
      [referencedByAnnotation]: jobs,
      [upstreamSourceKeyAnnotation]: keyOf(ref.namespace, ref.name),
      [upstreamReferencesAnnotation]: jobs,
      [upstreamModeAnnotation]: "batch"
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
    const found = existing.get(name)
    if (found === undefined) create.push(desired)
    else if (!current(found, type, secret, annotations)) update.push({ ...desired, metadata: { ...found.metadata, annotations } })
  }
  const bySource = new Map(references.map((ref) => [keyOf(ref.namespace, ref.name), ref]))
  for (const copy of copies) {
    if (isOwnCopy(copy) || !isCopy(copy)) continue
    const sourceKey = copy.metadata.annotations?.[upstreamSourceKeyAnnotation] ?? ""
    const ref = bySource.get(sourceKey)
    const secret = ref === undefined ? undefined : source(ref.namespace, ref.name)
    const type = secret?.["type"]
    if (ref === undefined || secret === undefined || !isPullSecretType(type)) continue
    const users = upstreamReferences(copy).filter((job) => ref.jobs.includes(job))
    if (users.length === 0) continue
    wanted.add(copy.metadata.name ?? "")
    const annotations = { ...copy.metadata.annotations, [upstreamReferencesAnnotation]: users.sort().join(",") }
    if (current(copy, type, secret, annotations)) continue
    update.push({ ...copy, type, data: secret["data"] ?? {}, metadata: { ...copy.metadata, annotations } })
  }
  const remove = copies.filter((c) => !wanted.has(c.metadata.name ?? "")).map((c) => c.metadata.name ?? "")
  return { create, update, delete: remove }
}

export type SecretProblem = { readonly reason: "PullSecretNotFound" | "PullSecretInvalidType"; readonly message: string }

/** Why a job's pull secret cannot be used, in words for its Valid condition (none when usable). */
export const secretProblem = (namespace: string, name: string, secret: KubeObject | undefined): SecretProblem | undefined => {
  if (secret === undefined) return { reason: "PullSecretNotFound", message: `pull secret ${namespace}/${name} not found` }
  const type = secret["type"]
  if (isPullSecretType(type)) return undefined
  return {
    reason: "PullSecretInvalidType",
    message: `pull secret ${namespace}/${name} has type ${String(type)}, want ${pullSecretTypes.join(" or ")}`
  }
}
