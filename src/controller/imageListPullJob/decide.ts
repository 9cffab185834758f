import type { FailedImageStatus, ImageListPullJob, ImageListPullJobStatus } from "../../api/imageListPullJob.ts"
import { quoteBounded } from "../../api/goQuote.ts"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import { apiVersion } from "../../api/meta.ts"
import { preferredApiVersion } from "../../api/references.ts"
import { withUpstreamSpelling } from "../../api/pullPolicySpelling.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import { jitterSeconds } from "../jitter.ts"
import { observed, setCondition } from "../status/conditions.ts"
import { listDigestVerdict } from "./digestMismatches.ts"
import { listPreloadedVerdicts } from "./listPreloaded.ts"
import { canonical } from "../workload/template.ts"
import { rfc3339 } from "../../api/time.ts"
import { seedNodesAnnotation } from "../imagePullJob/seedNodes.ts"

export const templateHashLabel = "imagelistpulljob.apps.kruise.io/template-hash"

/** A short stable hash: children's names and template labels must not change between reconciles. */
const shortHash = (text: string): string =>
  (jitterSeconds(text, 0, 0x7fffffff) >>> 0).toString(36) + (jitterSeconds(`${text}#`, 0, 0x7fffffff) >>> 0).toString(36)

/** What the children share: the job's spec without its images, spelt as upstream (a job respelt keeps its hash). */
const template = (job: ImageListPullJob) => {
  const { images: _, ...rest } = job.spec
  return withUpstreamSpelling(rest)
}

/** A hash of everything the children share: an edit to any of it replaces them. */
const templateHash = (job: ImageListPullJob): string => shortHash(JSON.stringify(template(job)))

/**
 * Whether a child was made from the current template. One OpenKruise's controller made (a migrated
 * cluster) has no hash of preheat's: upstream labels it with a hash of Go's object layout
 * (controller-revision-hash), so it is current when its spec is the template, as upstream's own
 * isConsistentVersion also accepts (pkg/controller/imagelistpulljob/imagelistpulljob_controller.go).
 * Kept, it carries on: a new child would be a new owner on every node's tag, so a new version and
 * another pull of what was pulled already.
 */
const madeFromTemplate = (child: ImagePullJob, job: ImageListPullJob, hash: string): boolean => {
  const label = child.metadata.labels?.[templateHashLabel]
  if (label !== undefined) return label === hash
  const { image: _, ...spec } = child.spec
  return canonical(spec) === canonical(template(job))
}

/** A child's name is stable for (image, template), so a retried create finds its earlier self. */
const childName = (job: ImageListPullJob, image: string, hash: string): string =>
  `${(job.metadata.name ?? "").slice(0, 240)}-${shortHash(`${image}@${hash}`)}`.replace(/-+$/, "")

export interface ListJobDecision {
  readonly create: ReadonlyArray<KubeObject>
  readonly delete: ReadonlyArray<string>
  readonly status: ImageListPullJobStatus
  readonly events: ReadonlyArray<ObjectEvent>
  readonly deleteJob: boolean
  readonly wakeAt: number | undefined
}

/**
 * One ImageListPullJob from its children (SPEC §2 ImageListPullJob): one ImagePullJob per image
 * with the current template; children of removed images or of an older template go; status is
 * the children's, aggregated.
 */
export const decideImageListPullJob = (job: ImageListPullJob, children: ReadonlyArray<ImagePullJob>, now: number): ListJobDecision => {
  const previous = job.status
  const nowIso = rfc3339(now)
  const ttl = job.spec.completionPolicy.ttlSecondsAfterFinished
  if (previous?.completionTime !== undefined) {
    const deleteAt = ttl === undefined ? undefined : Date.parse(previous.completionTime) + ttl * 1000
    const expired = deleteAt !== undefined && deleteAt <= now
    return {
      create: [],
      delete: [],
      status: observed(previous, job.metadata.generation),
      events: expired ? [{ type: "Normal", reason: "DeletedByTTL", message: `job deleted ${ttl}s after it finished` }] : [],
      deleteJob: expired,
      wakeAt: expired ? undefined : deleteAt
    }
  }
  const hash = templateHash(job)
  const current = new Map<string, ImagePullJob>()
  const remove: Array<string> = []
  for (const child of children) {
    const wanted = madeFromTemplate(child, job, hash) && job.spec.images.includes(child.spec.image)
    if (wanted && !current.has(child.spec.image)) current.set(child.spec.image, child)
    else if (child.metadata.deletionTimestamp === undefined) remove.push(child.metadata.name ?? "")
  }
  const events: Array<ObjectEvent> = []
  const missing = job.spec.images.filter((image) => !current.has(image))
  // Each child seeds as the list job asks (read when it is created: an edit reaches children made afterwards).
  const seedNodes = job.metadata.annotations?.[seedNodesAnnotation]
  const create = missing.map(
    (image): KubeObject => ({
      apiVersion,
      kind: "ImagePullJob",
      metadata: {
        name: childName(job, image, hash),
        namespace: job.metadata.namespace ?? "default",
        labels: { ...job.metadata.labels, [templateHashLabel]: hash },
        ...(seedNodes === undefined ? {} : { annotations: { [seedNodesAnnotation]: seedNodes } }),
        ownerReferences: [
          {
            apiVersion: preferredApiVersion,
            kind: "ImageListPullJob",
            name: job.metadata.name ?? "",
            uid: job.metadata.uid ?? "",
            controller: true,
            blockOwnerDeletion: true
          }
        ]
      },
      spec: { ...template(job), image }
    })
  )
  for (const image of missing) {
    events.push({
      type: "Normal",
      reason: "CreatedImagePullJob",
      message: `created ImagePullJob ${childName(job, image, hash)} for ${quoteBounded(image)}`
    })
  }
  for (const name of remove) events.push({ type: "Normal", reason: "DeletedImagePullJob", message: `deleted ImagePullJob ${name}` })

  const kept = [...current.values()]
  // Upstream's counting: a child that has started is completed once every node it wanted
  // succeeded or failed, succeeded once every one succeeded, Never children included.
  const started = kept.filter((c) => c.status?.startTime !== undefined)
  const finished = ({ status }: ImagePullJob) => status?.desired === (status?.succeeded ?? 0) + (status?.failed ?? 0)
  const completed = started.filter(finished)
  const succeeded = started.filter(({ status }) => status?.desired === status?.succeeded)
  const failedImageStatuses: Array<FailedImageStatus> = kept
    .filter((c) => (c.status?.failed ?? 0) > 0)
    .map((c) => ({
      imagePullJob: c.metadata.name ?? "",
      name: c.spec.image,
      message: `failed on ${c.status?.failed} nodes: ${(c.status?.failedNodes ?? []).join(", ")}`
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const desired = job.spec.images.length
  const always = job.spec.completionPolicy.type === "Always"
  const done = always && create.length === 0 && completed.length === desired
  if (done)
    events.push({
      type: "Normal",
      reason: "Completed",
      message: `${desired} images pulled, ${failedImageStatuses.length} failed somewhere`
    })
  let conditions = setCondition(previous?.conditions, { type: "Valid", status: "True", reason: "Valid" }, nowIso)
  const digests = listDigestVerdict(previous?.conditions, kept)
  if (digests.condition !== undefined) conditions = setCondition(conditions, digests.condition, nowIso)
  if (digests.event !== undefined) events.push(digests.event)
  const preloaded = listPreloadedVerdicts(previous?.conditions, kept)
  for (const condition of preloaded.conditions) conditions = setCondition(conditions, condition, nowIso)
  events.push(...preloaded.events)
  if (done) conditions = setCondition(conditions, { type: "Complete", status: "True", reason: "Completed" }, nowIso)
  const status: ImageListPullJobStatus = {
    startTime: previous?.startTime ?? nowIso,
    ...(done ? { completionTime: nowIso } : {}),
    desired,
    active: started.filter((c) => (c.status?.active ?? 0) > 0).length,
    completed: completed.length,
    succeeded: succeeded.length,
    ...(failedImageStatuses.length === 0 ? {} : { failedImageStatuses }),
    conditions,
    ...(job.metadata.generation === undefined ? {} : { observedGeneration: job.metadata.generation })
  }
  return {
    create,
    delete: remove,
    status,
    events,
    deleteJob: false,
    wakeAt: done && ttl !== undefined ? now + ttl * 1000 : undefined
  }
}
