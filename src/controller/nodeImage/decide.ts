import { quoteBounded } from "../../api/goQuote.ts"
import { pullReference } from "../../api/imageReference.ts"
import type { ImageSpec, ImageTagSpec, ImageTagStatus, NodeImage, NodeImageStatus, ReferenceObject } from "../../api/nodeImage.ts"
import type { ObjectReference } from "../../api/meta.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { keyOf } from "../../kube/objectKey.ts"
import { readySince } from "./nodeReadiness.ts"
import { rfc3339 } from "../../api/time.ts"
import type { ParseTime } from "./tagTimes.ts"

export interface NodeImageSettings {
  /** How long a Node must have been Ready before it gets a NodeImage. */
  readonly readyDelayMs: number
  /** How long a tag may go without any word from the daemon before it is marked Failed. */
  readonly unresponsiveMs: number
}

export interface NodeImageInput {
  readonly name: string
  readonly node: KubeObject | undefined
  readonly nodeImage: NodeImage | undefined
  /**
   * Whether the Node is held by preheat's startup taint: it gets its NodeImage as soon as it is
   * Ready, without the delay, since it takes no pods until it is warm (nodeWarming/).
   */
  readonly warming: boolean
  readonly jobExists: (uid: string) => boolean
  /** The secret copies a live job's tags point at; undefined when that cannot be told. */
  readonly jobSecrets: (uid: string) => ReadonlyArray<ReferenceObject> | undefined
  readonly now: number
  readonly settings: NodeImageSettings
  /** How tag times are read (the controller's memo of Date.parse, tagTimes.ts). */
  readonly parseTime: ParseTime
}

export interface TagFailure {
  readonly image: string
  readonly tag: string
  readonly owners: ReadonlyArray<ObjectReference>
  readonly message: string
}

export type NodeImageDecision =
  | { readonly action: "none"; readonly wakeAt: number | undefined }
  | { readonly action: "create"; readonly labels: Readonly<Record<string, string>> }
  | { readonly action: "delete" }
  | {
      readonly action: "update"
      /** Labels to set (null removes), when they differ from the Node's. */
      readonly labels: Readonly<Record<string, string | null>> | undefined
      /** Image entries to replace (undefined removes the image). */
      readonly images: ReadonlyMap<string, ImageSpec | undefined>
      /** Tags the daemon never finished, now marked Failed by the controller. */
      readonly failures: ReadonlyArray<TagFailure>
      readonly wakeAt: number | undefined
    }

const labelChanges = (
  current: Readonly<Record<string, string>>,
  wanted: Readonly<Record<string, string>>
): Record<string, string | null> | undefined => {
  const changes: Record<string, string | null> = {}
  for (const [k, v] of Object.entries(wanted)) if (current[k] !== v) changes[k] = v
  for (const k of Object.keys(current)) if (!(k in wanted)) changes[k] = null
  return Object.keys(changes).length === 0 ? undefined : changes
}

/**
 * Upstream's label for a NodeImage that no Node backs: its e2e tests create one (`fake-nodeimage`),
 * select it with jobs and write its tags' status by hand, and expect the NodeImage controller to
 * leave it in place (upstream checks only that the key is present, whatever its value).
 */
const fakeNodeImageLabel = "apps.kruise.io/fake-nodeimage"

const isFake = (nodeImage: NodeImage): boolean => nodeImage.metadata.labels?.[fakeNodeImageLabel] !== undefined

const earliest = (a: number | undefined, b: number): number => (a === undefined ? b : Math.min(a, b))

/**
 * One NodeImage, decided from its Node and the jobs alive (SPEC §2 NodeImage controller): its
 * lifecycle following the Node, labels kept equal, createdAt filled in, tags of vanished owners
 * and past their TTL dropped, and tags the daemon left unanswered marked Failed.
 */
export const decideNodeImage = (input: NodeImageInput): NodeImageDecision => {
  const { node, nodeImage, now, settings } = input
  if (nodeImage === undefined) {
    const since = node === undefined ? undefined : readySince(node)
    if (since === undefined) return { action: "none", wakeAt: undefined }
    const at = since + (input.warming ? 0 : settings.readyDelayMs)
    return at <= now ? { action: "create", labels: node?.metadata.labels ?? {} } : { action: "none", wakeAt: at }
  }
  if (node === undefined && !isFake(nodeImage)) return { action: "delete" }
  if (nodeImage.metadata.deletionTimestamp !== undefined) return { action: "none", wakeAt: undefined }

  let wakeAt: number | undefined
  const images = new Map<string, ImageSpec | undefined>()
  const failures: Array<TagFailure> = []
  for (const [name, entry] of Object.entries(nodeImage.spec.images ?? {})) {
    const statuses = nodeImage.status?.imageStatuses?.[name]?.tags ?? []
    let changed = false
    const tags: Array<ImageTagSpec> = []
    for (const tag of entry.tags) {
      const owners = tag.ownerReferences ?? []
      const alive = owners.filter((o) => o.uid === undefined || input.jobExists(o.uid))
      if (owners.length > 0 && alive.length === 0) {
        changed = true
        continue
      }
      const status = statuses.find((s) => s.tag === tag.tag && (s.version ?? 0) === tag.version)
      const ttl = tag.pullPolicy?.ttlSecondsAfterFinished
      if (status?.completionTime !== undefined && ttl !== undefined && (status.phase === "Succeeded" || status.phase === "Failed")) {
        const expiresAt = input.parseTime(status.completionTime) + ttl * 1000
        if (expiresAt <= now) {
          changed = true
          continue
        }
        wakeAt = earliest(wakeAt, expiresAt)
      }
      let kept: ImageTagSpec = alive.length === owners.length ? tag : { ...tag, ownerReferences: alive }
      if (kept.createdAt === undefined) kept = { ...kept, createdAt: rfc3339(now) }
      if (kept !== tag) changed = true
      tags.push(kept)
      const failure = unanswered(kept, status, now, settings.unresponsiveMs, input.parseTime)
      if (failure.message !== undefined) failures.push({ image: name, tag: kept.tag, owners: alive, message: failure.message })
      else if (failure.checkAt !== undefined) wakeAt = earliest(wakeAt, failure.checkAt)
    }
    const pullSecrets = tags.length === 0 ? entry.pullSecrets : stillWanted(entry.pullSecrets, tags, input.jobSecrets)
    if (pullSecrets !== entry.pullSecrets) changed = true
    if (!changed) continue
    images.set(name, tags.length === 0 ? undefined : withSecrets({ ...entry, tags }, pullSecrets))
  }
  // A fake NodeImage has no Node to copy labels from: its own are what selects it.
  const labels = node === undefined ? undefined : labelChanges(nodeImage.metadata.labels ?? {}, node.metadata.labels ?? {})
  if (labels === undefined && images.size === 0 && failures.length === 0) return { action: "none", wakeAt }
  return { action: "update", labels, images, failures, wakeAt }
}

/**
 * The image's secret references that a job owning one of its tags still uses: a job that was
 * deleted, or edited to use other secrets, leaves none behind pointing at a copy that is gone.
 * Kept as they are when a tag has no owner (written by hand) or an owner's secrets are unknown.
 */
const stillWanted = (
  refs: ReadonlyArray<ReferenceObject> | undefined,
  tags: ReadonlyArray<ImageTagSpec>,
  jobSecrets: NodeImageInput["jobSecrets"]
): ReadonlyArray<ReferenceObject> | undefined => {
  if (refs === undefined || refs.length === 0) return refs
  const wanted = new Set<string>()
  for (const tag of tags) {
    const owners = tag.ownerReferences ?? []
    if (owners.length === 0) return refs
    for (const owner of owners) {
      const secrets = owner.uid === undefined ? undefined : jobSecrets(owner.uid)
      if (secrets === undefined) return refs
      for (const s of secrets) wanted.add(keyOf(s.namespace ?? "", s.name ?? ""))
    }
  }
  const kept = refs.filter((r) => wanted.has(keyOf(r.namespace ?? "", r.name ?? "")))
  return kept.length === refs.length ? refs : kept
}

const withSecrets = (entry: ImageSpec, pullSecrets: ReadonlyArray<ReferenceObject> | undefined): ImageSpec => {
  if (pullSecrets === entry.pullSecrets) return entry
  const { pullSecrets: _, ...rest } = entry
  return pullSecrets === undefined || pullSecrets.length === 0 ? rest : { ...rest, pullSecrets }
}

const active = (status: ImageTagStatus | undefined): boolean =>
  status === undefined || status.phase === "Pulling" || status.phase === "Waiting"

/**
 * A daemon that never reported on a tag, or is still pulling past the tag's deadline plus the
 * same grace, is not coming back to it: the tag is failed for it so the job can finish.
 */
const unanswered = (
  tag: ImageTagSpec,
  status: ImageTagStatus | undefined,
  now: number,
  graceMs: number,
  parseTime: ParseTime
): { readonly message?: string; readonly checkAt?: number } => {
  if (!active(status) || tag.createdAt === undefined) return {}
  const created = parseTime(tag.createdAt)
  if (status === undefined) {
    const at = created + graceMs
    return at <= now ? { message: "node has not responded for a long time" } : { checkAt: at }
  }
  const deadline = tag.pullPolicy?.activeDeadlineSeconds
  if (deadline === undefined) return {}
  const at = created + deadline * 1000 + graceMs
  return at <= now ? { message: "pulling exceeds the activeDeadlineSeconds" } : { checkAt: at }
}

/** The Warning's words for a tag failed for a silent daemon: the reference as it is pulled, `name@sha256:...` for a digest. */
export const tagFailureMessage = (failure: TagFailure, node: string): string =>
  `image ${quoteBounded(pullReference({ name: failure.image, tag: failure.tag }))} on node ${node}: ${failure.message}`

/** The status with the given tags failed, for the controller's (rare) status write. */
export const withFailures = (
  status: NodeImageStatus | undefined,
  failures: ReadonlyArray<TagFailure>,
  versions: (image: string, tag: string) => number,
  now: number
): NodeImageStatus["imageStatuses"] => {
  const imageStatuses: Record<string, { tags: Array<ImageTagStatus> }> = {}
  for (const [name, image] of Object.entries(status?.imageStatuses ?? {})) imageStatuses[name] = { tags: [...image.tags] }
  for (const failure of failures) {
    const entry = imageStatuses[failure.image] ?? { tags: [] }
    const failed: ImageTagStatus = {
      tag: failure.tag,
      phase: "Failed",
      version: versions(failure.image, failure.tag),
      completionTime: rfc3339(now),
      message: failure.message
    }
    entry.tags = [...entry.tags.filter((t) => t.tag !== failure.tag), failed]
    imageStatuses[failure.image] = entry
  }
  return imageStatuses
}
