import { defaultBackoffLimit, defaultTimeoutSeconds } from "../api/jobTemplate.ts"
import type { ImageTagStatus, NodeImageSpec, NodeImageStatus, ReferenceObject } from "../api/nodeImage.ts"
import type { ObjectReference } from "../api/meta.ts"
import { pullReference } from "../api/imageReference.ts"

/** One tag of the NodeImage spec, with everything a pull worker needs and the defaults applied. */
export interface TagTask {
  /** Identifies the tag (not the version) among the node's tasks. */
  readonly key: string
  /** The spec.images key: a name without tag, e.g. `nginx`, `registry.k8s.io/pause`. */
  readonly image: string
  /** A tag, or a digest `sha256:...`. */
  readonly tag: string
  readonly version: number
  /** What the runtime is asked for: `name:tag`, or `name@sha256:...` for a digest (SPEC §4.1). */
  readonly reference: string
  readonly imagePullPolicy: "Always" | "IfNotPresent"
  readonly timeoutSeconds: number
  readonly backoffLimit: number
  readonly activeDeadlineSeconds?: number
  /** RFC 3339, when the task was written; the deadline counts from it. */
  readonly createdAt?: string
  readonly sandboxConfig?: {
    readonly labels?: Readonly<Record<string, string>>
    readonly annotations?: Readonly<Record<string, string>>
  }
  readonly pullSecrets: ReadonlyArray<ReferenceObject>
  readonly owners: ReadonlyArray<ObjectReference>
  /** Set when the daemon cannot read this tag (nodeImageSpec.ts): why; the tag is failed, never pulled. */
  readonly unreadable?: string
}

/** Spaces appear in neither image names nor tags, so this key is unambiguous. */
export const tagKey = (image: string, tag: string): string => `${image} ${tag}`

/** Every tag of the spec, in spec order; those in `unreadable` (by tagKey) carry why they cannot be pulled. */
export const tagTasks = (spec: NodeImageSpec, unreadable: ReadonlyMap<string, string> = new Map()): ReadonlyArray<TagTask> => {
  const tasks: Array<TagTask> = []
  for (const [image, entry] of Object.entries(spec.images ?? {})) {
    for (const tag of entry.tags) {
      const policy = tag.pullPolicy ?? {}
      const key = tagKey(image, tag.tag)
      const why = unreadable.get(key)
      tasks.push({
        key,
        image,
        tag: tag.tag,
        version: tag.version,
        reference: pullReference({ name: image, tag: tag.tag }),
        imagePullPolicy: tag.imagePullPolicy,
        timeoutSeconds: policy.timeoutSeconds ?? defaultTimeoutSeconds,
        backoffLimit: policy.backoffLimit ?? defaultBackoffLimit,
        ...(policy.activeDeadlineSeconds === undefined ? {} : { activeDeadlineSeconds: policy.activeDeadlineSeconds }),
        ...(tag.createdAt === undefined ? {} : { createdAt: tag.createdAt }),
        ...(entry.sandboxConfig === undefined ? {} : { sandboxConfig: entry.sandboxConfig }),
        pullSecrets: entry.pullSecrets ?? [],
        owners: tag.ownerReferences ?? [],
        ...(why === undefined ? {} : { unreadable: why })
      })
    }
  }
  return tasks
}

export const isFinishedPhase = (phase: ImageTagStatus["phase"] | undefined): boolean => phase === "Succeeded" || phase === "Failed"

/** The reported status of one tag, whatever version it is for. */
export const storedTagStatus = (imageStatuses: NodeImageStatus["imageStatuses"], image: string, tag: string): ImageTagStatus | undefined =>
  imageStatuses?.[image]?.tags.find((t) => t.tag === tag)

/** Whether the status already shows this version of the tag finished: then it is not pulled (again). */
export const finishedInStatus = (imageStatuses: NodeImageStatus["imageStatuses"], task: TagTask): boolean => {
  const status = storedTagStatus(imageStatuses, task.image, task.tag)
  return status !== undefined && (status.version ?? 0) === task.version && isFinishedPhase(status.phase)
}
