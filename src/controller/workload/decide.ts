import { apiVersion } from "../../api/meta.ts"
import { quoteBounded } from "../../api/goQuote.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import { parseSettings, scaled } from "./annotations.ts"
import type { PreDownloadSettings } from "./annotations.ts"
import { revisionHashLabel } from "./revisions.ts"
import type { Rollout, WorkloadKind } from "./revisions.ts"
import { imagesOf, statusOf, templateOf } from "./template.ts"

/** Upstream's CreateJobForWorkload: completed jobs go 10 minutes after they finish. */
const ttlSecondsAfterFinished = 600
/** Upstream's CreateJobForWorkload: one retry per node. */
const backoffLimit = 1

export interface WorkloadInput {
  readonly kind: WorkloadKind
  readonly workload: KubeObject
  /** undefined while the ReplicaSets / ControllerRevisions that tell the revisions are not there. */
  readonly rollout: Rollout | undefined
  /** The ImagePullJobs whose controller is this workload. */
  readonly jobs: ReadonlyArray<KubeObject>
  /** What this workload's last decision settled (see `settled`), remembered by the reconciler. */
  readonly settled: string | undefined
}

export interface WorkloadDecision {
  readonly create: ReadonlyArray<KubeObject>
  readonly delete: ReadonlyArray<string>
  /** Besides upstream's CreatedImagePullJob for each job created (createdEvent), recorded after the create. */
  readonly events: ReadonlyArray<ObjectEvent>
  /**
   * What to remember once the writes succeeded, undefined to forget: `created:HASH` (the update
   * revision's jobs were made; upstream records this as a label on the revision), `skipped:HASH`,
   * `invalid:MESSAGE`; an event is emitted only when this changes, so reconciles woken by pod
   * changes repeat nothing.
   */
  readonly settled: string | undefined
}

const finished = (job: KubeObject): boolean => statusOf(job)["completionTime"] !== undefined
const deleting = (job: KubeObject): boolean => job.metadata.deletionTimestamp !== undefined
const nameOf = (job: KubeObject): string => job.metadata.name ?? ""

/** Upstream's event for a job it created, recorded once the create succeeded. */
export const createdEvent = (job: KubeObject): ObjectEvent => ({
  type: "Normal",
  reason: "CreatedImagePullJob",
  message: `created ImagePullJob ${job.metadata.name} for image: ${quoteBounded((job["spec"] as { image?: string }).image ?? "")}`
})

const deleted = (name: string, why: string): ObjectEvent => ({
  type: "Normal",
  reason: "DeletedImagePullJob",
  message: `deleted ImagePullJob ${name}: ${why}`
})

/**
 * The images of the update revision that no current revision runs, each with the first container
 * that has it (the job is named after it, as upstream names jobs `REVISION-CONTAINER`). Upstream
 * compares container by container; comparing images means an image a current pod already runs,
 * in whatever container, is not pulled again, and two containers with one new image make one job.
 */
const newImages = (rollout: Rollout): ReadonlyArray<{ readonly container: string; readonly image: string }> => {
  const running = new Set(rollout.current.flatMap((r) => imagesOf(r.template).map((c) => c.image)))
  const seen = new Set<string>()
  const result: Array<{ container: string; image: string }> = []
  for (const container of imagesOf(rollout.update.template)) {
    const image = container.image!
    if (running.has(image) || seen.has(image)) continue
    seen.add(image)
    result.push({ container: container.name ?? "", image })
  }
  return result
}

/** `REVISION-CONTAINER`, as upstream, kept within the 253 characters of an object name. */
export const jobName = (revision: string, container: string): string => `${revision}-${container}`.slice(0, 253).replace(/[-.]+$/, "")

const ownerReference = (kind: WorkloadKind, workload: KubeObject) => ({
  apiVersion: "apps/v1",
  kind,
  name: workload.metadata.name ?? "",
  uid: workload.metadata.uid ?? "",
  controller: true,
  blockOwnerDeletion: true
})

/** One ImagePullJob as upstream's CreateJobForWorkload makes it. */
const imagePullJob = (input: WorkloadInput, rollout: Rollout, settings: PreDownloadSettings, name: string, image: string): KubeObject => {
  const template = templateOf(input.workload)
  // Upstream: the template's labels (what the workload owns matches its selector) plus the revision.
  const labels = { ...template.metadata?.labels, [revisionHashLabel]: rollout.update.hash }
  const annotations = template.metadata?.annotations ?? {}
  const pullSecrets = (template.spec?.imagePullSecrets ?? []).flatMap((s) => (s.name === undefined ? [] : [s.name]))
  const selector =
    (input.workload["spec"] as { selector?: { matchLabels?: Record<string, string>; matchExpressions?: Array<unknown> } }).selector ?? {}
  return {
    apiVersion,
    kind: "ImagePullJob",
    metadata: {
      name,
      namespace: input.workload.metadata.namespace ?? "default",
      labels,
      ownerReferences: [ownerReference(input.kind, input.workload)]
    },
    spec: {
      image,
      ...(pullSecrets.length === 0 ? {} : { pullSecrets }),
      // The nodes of the pods not yet on the update revision.
      podSelector: {
        ...(selector.matchLabels === undefined ? {} : { matchLabels: selector.matchLabels }),
        matchExpressions: [
          ...(selector.matchExpressions ?? []),
          { key: rollout.podLabel, operator: "NotIn", values: [...rollout.updateValues] }
        ]
      },
      parallelism: settings.parallelism,
      pullPolicy: { backoffLimit, timeoutSeconds: settings.timeoutSeconds },
      completionPolicy: { type: "Always", ttlSecondsAfterFinished },
      sandboxConfig: { labels, ...(Object.keys(annotations).length === 0 ? {} : { annotations }) }
    }
  }
}

/**
 * Pre-download for one annotated workload (upstream's createImagePullJobsForInPlaceUpdate and the
 * code around it in the CloneSet, Advanced StatefulSet and Advanced DaemonSet controllers):
 *
 * - annotation gone: its unfinished jobs are deleted;
 * - rollout complete (no pod runs another revision): its jobs are deleted, as upstream does once
 *   the revisions are consistent;
 * - jobs of an older update revision (the template was edited again) are deleted;
 * - once at least min-updated-ready-pods pods of the update revision are Ready, one job per new
 *   image is created for the nodes of the pods still on other revisions, once per revision.
 */
export const decideWorkload = (input: WorkloadInput): WorkloadDecision => {
  const { jobs, rollout, workload } = input
  const none: WorkloadDecision = { create: [], delete: [], events: [], settled: input.settled }
  if (workload.metadata.deletionTimestamp !== undefined) return none
  const parsed = parseSettings(workload.metadata.annotations)
  const live = jobs.filter((j) => !deleting(j))
  if (parsed._tag === "Off") {
    const stop = live.filter((j) => !finished(j)).map(nameOf)
    return {
      create: [],
      delete: stop,
      events: stop.map((name) => deleted(name, "the pre-download annotation was removed")),
      settled: undefined
    }
  }
  if (rollout === undefined) return none
  if (rollout.current.length === 0) {
    const names = live.map(nameOf)
    return {
      create: [],
      delete: names,
      events: names.map((name) => deleted(name, `every pod runs revision ${rollout.update.name}`)),
      settled: undefined
    }
  }
  const stale = live.filter((j) => j.metadata.labels?.[revisionHashLabel] !== rollout.update.hash).map(nameOf)
  const events: Array<ObjectEvent> = stale.map((name) => deleted(name, `the template changed again, to revision ${rollout.update.name}`))
  const base = { create: [], delete: stale, events }
  if (parsed._tag === "Invalid") {
    const settled = `invalid:${parsed.message}`
    if (input.settled === settled) return { ...base, settled }
    return { ...base, events: [...events, { type: "Warning", reason: "InvalidPreDownload", message: parsed.message }], settled }
  }
  const hash = rollout.update.hash
  if (input.settled === `created:${hash}`) return { ...base, settled: input.settled }
  if (rollout.skip !== undefined) {
    const settled = `skipped:${hash}`
    if (input.settled === settled) return { ...base, settled }
    const message = `no image pre-download for revision ${rollout.update.name}: ${rollout.skip}`
    return { ...base, events: [...events, { type: "Normal", reason: "SkippedImagePullJob", message }], settled }
  }
  const settings = parsed.settings
  const ours = live.filter((j) => j.metadata.labels?.[revisionHashLabel] === hash)
  // Upstream's gate, counted from the pods themselves rather than the status of a controller.
  const needed = scaled(settings.minUpdatedReadyPods, rollout.replicas, true)
  if (ours.length === 0 && rollout.updatedReady < needed) return { ...base, settled: input.settled }
  const existing = new Set(jobs.map(nameOf))
  const create = newImages(rollout)
    .map(({ container, image }) => ({ name: jobName(rollout.update.name, container), image }))
    .filter(({ name }) => !existing.has(name))
    .map(({ image, name }) => imagePullJob(input, rollout, settings, name, image))
  return { create, delete: stale, events, settled: `created:${hash}` }
}
