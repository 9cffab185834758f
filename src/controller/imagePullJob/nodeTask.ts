import type { SandboxConfig } from "../../api/jobTemplate.ts"
import { type PreloadedVerdict, preloadedVerdict } from "../../api/kubeletImageVerification.ts"
import type { ObjectReference } from "../../api/meta.ts"
import type { ImageSpec, ImageTagSpec, NodeImage, ReferenceObject, TagPullPolicy } from "../../api/nodeImage.ts"
import { owns, ownTagStatus } from "../../api/ownTag.ts"
import { renewedProviders } from "../../api/providerRenewal.ts"
import { isThrottledReport } from "../../api/registryThrottle.ts"

/** What one job asks of every node: one tag of one image, owned by the job. */
export interface JobTask {
  readonly image: string
  readonly tag: string
  readonly owner: ObjectReference & { readonly uid: string }
  readonly imagePullPolicy: "Always" | "IfNotPresent"
  readonly pullSecrets: ReadonlyArray<ReferenceObject>
  readonly sandboxConfig?: SandboxConfig
}

export type NodeState =
  | { readonly phase: "notSynced" }
  /** `throttled`: the message of a throttled attempt waiting for its retry (each retry writes a new one). */
  | { readonly phase: "active"; readonly throttled?: string }
  /**
   * `preloaded`: what the node's kubelet does with the image, which it did not pull itself (its
   * policy, kubeletImageVerification); `authenticated`: the pull presented credentials.
   */
  | {
      readonly phase: "succeeded"
      readonly digest: string | undefined
      readonly preloaded: PreloadedVerdict
      readonly authenticated: boolean
    }
  /** `renewedBy`: the credential providers the node's daemon found answering anew since it failed (api/providerRenewal.ts). */
  | { readonly phase: "failed"; readonly message: string; readonly renewedBy: ReadonlyArray<string> }

/**
 * Where a node stands for a job, judged by the job's own tag (uid and version). A tag the daemon
 * has not reported on yet counts as active, so parallelism holds while statuses race (SPEC §4.2).
 */
export const nodeState = (node: NodeImage, task: JobTask): NodeState => {
  const status = ownTagStatus(node, task.image, task.tag, task.owner.uid)
  if (status === null) return { phase: "notSynced" }
  switch (status?.phase) {
    case "Succeeded":
      return {
        phase: "succeeded",
        digest: status.digest,
        preloaded: preloadedVerdict(node.status?.kubeletImageVerification, task.image),
        authenticated: status.authenticated === true
      }
    case "Failed":
      return { phase: "failed", message: status.message ?? "failed", renewedBy: renewedProviders(status) }
    default:
      return status !== undefined && isThrottledReport(status) ? { phase: "active", throttled: status.message ?? "" } : { phase: "active" }
  }
}

/** The version the daemon last reported for a tag: a re-added tag must go past it to be pulled. */
export const reportedVersion = (node: NodeImage, image: string, tag: string): number | undefined =>
  node.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag)?.version

const samePolicy = (a: TagPullPolicy | undefined, b: TagPullPolicy): boolean =>
  a !== undefined &&
  a.timeoutSeconds === b.timeoutSeconds &&
  a.backoffLimit === b.backoffLimit &&
  a.ttlSecondsAfterFinished === b.ttlSecondsAfterFinished &&
  a.activeDeadlineSeconds === b.activeDeadlineSeconds

const sameStrings = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined) => {
  const ka = Object.keys(a ?? {})
  return ka.length === Object.keys(b ?? {}).length && ka.every((k) => a?.[k] === b?.[k])
}

const sameSandbox = (a: SandboxConfig | undefined, b: SandboxConfig | undefined): boolean =>
  sameStrings(a?.labels, b?.labels) && sameStrings(a?.annotations, b?.annotations)

const mergeSecrets = (
  existing: ReadonlyArray<ReferenceObject> | undefined,
  wanted: ReadonlyArray<ReferenceObject>
): ReadonlyArray<ReferenceObject> | undefined => {
  const missing = wanted.filter((w) => !(existing ?? []).some((e) => e.namespace === w.namespace && e.name === w.name))
  return missing.length === 0 ? existing : [...(existing ?? []), ...missing]
}

/**
 * The image entry of a node with the job's task in it. Returns `entry` itself when nothing needs
 * writing, so callers detect a no-op by identity. Joining a tag another job owns bumps its version
 * (pull again for this job); a tag the job owns first follows the job's edits (SPEC §4.6) without
 * a new pull; image-level secrets are added even when tag and owner exist (SPEC §4.3).
 */
export const withTask = (
  entry: ImageSpec | undefined,
  task: JobTask,
  pullPolicy: TagPullPolicy,
  now: string,
  lastReportedVersion: number | undefined
): ImageSpec => {
  const tags = entry?.tags ?? []
  const index = tags.findIndex((t) => t.tag === task.tag)
  const existing = tags[index]
  let tag: ImageTagSpec | undefined
  if (existing === undefined) {
    tag = {
      tag: task.tag,
      createdAt: now,
      pullPolicy,
      ownerReferences: [task.owner],
      version: lastReportedVersion === undefined ? 0 : lastReportedVersion + 1,
      imagePullPolicy: task.imagePullPolicy
    }
  } else if (!owns(existing, task.owner.uid)) {
    tag = {
      ...existing,
      createdAt: now,
      ownerReferences: [...(existing.ownerReferences ?? []), task.owner],
      version: existing.version + 1,
      imagePullPolicy: task.imagePullPolicy === "Always" ? "Always" : existing.imagePullPolicy
    }
  } else if (
    existing.ownerReferences?.[0]?.uid === task.owner.uid &&
    (!samePolicy(existing.pullPolicy, pullPolicy) || existing.imagePullPolicy !== task.imagePullPolicy)
  ) {
    tag = { ...existing, pullPolicy, imagePullPolicy: task.imagePullPolicy }
  }
  const pullSecrets = mergeSecrets(entry?.pullSecrets, task.pullSecrets)
  const sandboxChanged = task.sandboxConfig !== undefined && !sameSandbox(entry?.sandboxConfig, task.sandboxConfig)
  if (entry !== undefined && tag === undefined && pullSecrets === entry.pullSecrets && !sandboxChanged) return entry
  const nextTags = tag === undefined ? tags : existing === undefined ? [...tags, tag] : tags.map((t, i) => (i === index ? tag : t))
  const sandboxConfig = sandboxChanged ? task.sandboxConfig : entry?.sandboxConfig
  return {
    ...(pullSecrets === undefined || pullSecrets.length === 0 ? {} : { pullSecrets }),
    ...(sandboxConfig === undefined ? {} : { sandboxConfig }),
    tags: nextTags
  }
}

/**
 * The image entry with the job's tag to be pulled again: its next version (the daemon pulls each
 * version once), created now (the NodeImage controller times an unanswered tag from then), and
 * brought up to date with the task as withTask does.
 */
export const withRetry = (entry: ImageSpec | undefined, task: JobTask, pullPolicy: TagPullPolicy, now: string): ImageSpec => {
  const updated = withTask(entry, task, pullPolicy, now, undefined)
  return {
    ...updated,
    tags: updated.tags.map((t) => (t.tag === task.tag ? { ...t, version: t.version + 1, createdAt: now } : t))
  }
}

/**
 * The image entry without a job: its owner reference leaves every tag, and a tag that only it
 * owned goes (hand-written tags, with no owners at all, stay). `undefined` when no tag is left;
 * `entry` itself when the job owned nothing here.
 */
export const withoutOwner = (entry: ImageSpec, uid: string, keep?: string): ImageSpec | undefined => {
  if (!entry.tags.some((t) => t.tag !== keep && owns(t, uid))) return entry
  const tags = entry.tags.flatMap((t) => {
    if (t.tag === keep || !owns(t, uid)) return [t]
    const ownerReferences = (t.ownerReferences ?? []).filter((o) => o.uid !== uid)
    return ownerReferences.length === 0 ? [] : [{ ...t, ownerReferences }]
  })
  return tags.length === 0 ? undefined : { ...entry, tags }
}
