import { Result } from "effect"
import type { AdvancedCronJob, AdvancedCronJobStatus, TemplateKind } from "../../api/advancedCronJob.ts"
import { parseSchedule } from "../../api/cronSchedule.ts"
import { templateKindOf } from "../../api/cronJobValidation.ts"
import type { ImageListPullJob } from "../../api/imageListPullJob.ts"
import type { ObjectReference } from "../../api/meta.ts"
import { apiVersion } from "../../api/meta.ts"
import { preferredApiVersion } from "../../api/references.ts"
import { deprecatedPullPolicyMessage, usesDeprecatedPullPolicy, withUpstreamSpelling } from "../../api/pullPolicySpelling.ts"
import { rfc3339 } from "../../api/time.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import { setCondition } from "../status/conditions.ts"
import { dueRuns, tooManyMissedMessage } from "./schedule.ts"

/** Upstream's annotation on each created job: the nominal time it was scheduled for (RFC 3339). */
export const scheduledTimeAnnotation = "apps.kruise.io/scheduled-at"

export interface CronJobDecision {
  readonly status: AdvancedCronJobStatus
  readonly create: KubeObject | undefined
  /** Names of child ImageListPullJobs to delete (history limits, Replace). */
  readonly delete: ReadonlyArray<string>
  readonly events: ReadonlyArray<ObjectEvent>
  /** When the next run falls due (ms), if ever. */
  readonly wakeAt: number | undefined
}

type Outcome = "active" | "succeeded" | "failed"

/** upstream's isImageListPullJobFinished: finished once it has a completionTime; succeeded if every image did. */
const outcomeOf = (job: ImageListPullJob): Outcome =>
  job.status?.completionTime === undefined ? "active" : job.status.succeeded === job.status.desired ? "succeeded" : "failed"

const scheduledTimeOf = (job: ImageListPullJob): number | undefined => {
  const raw = job.metadata.annotations?.[scheduledTimeAnnotation]
  const parsed = raw === undefined ? Number.NaN : Date.parse(raw)
  return Number.isNaN(parsed) ? undefined : parsed
}

const referenceTo = (job: ImageListPullJob): ObjectReference => ({
  apiVersion: preferredApiVersion,
  kind: "ImageListPullJob",
  name: job.metadata.name ?? "",
  namespace: job.metadata.namespace ?? "",
  ...(job.metadata.uid === undefined ? {} : { uid: job.metadata.uid })
})

const byStartTime = (a: ImageListPullJob, b: ImageListPullJob): number => {
  const start = (job: ImageListPullJob) => (job.status?.startTime === undefined ? -Infinity : Date.parse(job.status.startTime))
  return start(a) - start(b) || ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1)
}

/** The oldest finished jobs beyond the limit (upstream sorts by startTime, unstarted first). */
const beyondLimit = (jobs: ReadonlyArray<ImageListPullJob>, limit: number): ReadonlyArray<string> =>
  [...jobs]
    .sort(byStartTime)
    .slice(0, Math.max(0, jobs.length - limit))
    .map((j) => j.metadata.name ?? "")

const latest = (times: ReadonlyArray<number | undefined>): number | undefined => {
  const known = times.filter((t): t is number => t !== undefined)
  return known.length === 0 ? undefined : Math.max(...known)
}

/** The ImageListPullJob of one scheduled run: upstream's name `<cron>-<unix seconds>`, owned by the cron job. */
const jobForRun = (cron: AdvancedCronJob, scheduledAt: number): KubeObject => {
  const template = cron.spec.template.imageListPullJobTemplate!
  return {
    apiVersion,
    kind: "ImageListPullJob",
    metadata: {
      name: `${cron.metadata.name}-${Math.floor(scheduledAt / 1000)}`,
      namespace: cron.metadata.namespace ?? "default",
      labels: { ...template.metadata?.labels },
      annotations: { ...template.metadata?.annotations, [scheduledTimeAnnotation]: rfc3339(scheduledAt) },
      ownerReferences: [
        {
          apiVersion: preferredApiVersion,
          kind: "AdvancedCronJob",
          name: cron.metadata.name ?? "",
          uid: cron.metadata.uid ?? "",
          controller: true,
          blockOwnerDeletion: true
        }
      ]
    },
    // Its runs carry upstream's spelling only; the cron job is the one told of the deprecated one.
    spec: withUpstreamSpelling(template.spec)
  }
}

const templateSpecPath = "spec.template.imageListPullJobTemplate.spec"

/**
 * The DeprecatedField warning of a template that spells pullPolicy.type (issue 26), once per
 * generation: while the Valid condition has not yet seen it (this decision writes it).
 */
const deprecatedFieldEvents = (cron: AdvancedCronJob): ReadonlyArray<ObjectEvent> => {
  const spec = cron.spec.template.imageListPullJobTemplate?.spec
  if (spec === undefined || !usesDeprecatedPullPolicy(spec)) return []
  if (cron.status?.conditions?.find((c) => c.type === "Valid")?.observedGeneration === cron.metadata.generation) return []
  return [{ type: "Warning", reason: "DeprecatedField", message: deprecatedPullPolicyMessage(spec, templateSpecPath) }]
}

const supported = (kind: TemplateKind | undefined) =>
  kind === "ImageListPullJob"
    ? {
        type: "Supported",
        status: "True" as const,
        reason: "TemplateSupported",
        message: "preheat creates an ImageListPullJob at each scheduled time"
      }
    : {
        type: "Supported",
        status: "False" as const,
        reason: "TemplateNotSupported",
        message:
          `preheat acts only on spec.template.imageListPullJobTemplate; ${kind === "Job" ? "jobTemplate" : "broadcastJobTemplate"} ` +
          "is kept but never run (OpenKruise's controller runs it)"
      }

/**
 * One AdvancedCronJob with an ImageListPullJob template, as upstream's reconcileImageListPullJob:
 * status from the children (active ones, the latest scheduled time), finished children beyond the
 * history limits deleted, and, unless paused, the latest due run started if it is within
 * startingDeadlineSeconds and the concurrency policy allows it (Forbid skips while one is active,
 * Replace deletes the active ones first). Other templates get status.type and a Supported=False
 * condition only.
 */
export const decideAdvancedCronJob = (cron: AdvancedCronJob, children: ReadonlyArray<ImageListPullJob>, now: number): CronJobDecision => {
  const previous = cron.status
  const kind = templateKindOf(cron.spec)
  const condition = supported(kind)
  const generation = cron.metadata.generation === undefined ? {} : { observedGeneration: cron.metadata.generation }
  const valid = setCondition(previous?.conditions, { type: "Valid", status: "True", reason: "Valid", ...generation }, rfc3339(now))
  const conditions = setCondition(valid, { ...condition, ...generation }, rfc3339(now))
  const events: Array<ObjectEvent> = [...deprecatedFieldEvents(cron)]
  const wasSupported = previous?.conditions?.find((c) => c.type === "Supported")
  if (condition.status === "False" && (wasSupported?.status !== "False" || wasSupported.message !== condition.message)) {
    events.push({ type: "Warning", reason: condition.reason, message: condition.message })
  }
  const base = { ...previous, ...(kind === undefined ? {} : { type: kind }), conditions }
  if (kind !== "ImageListPullJob") return { status: base, create: undefined, delete: [], events, wakeAt: undefined }

  const active = children.filter((c) => outcomeOf(c) === "active")
  // Kept when the jobs that carried it are gone (history limit 0): else the run they were for would start again.
  const recorded = previous?.lastScheduleTime === undefined ? undefined : Date.parse(previous.lastScheduleTime)
  const lastScheduled = latest([...children.map(scheduledTimeOf), recorded])
  const remove = [
    ...beyondLimit(
      children.filter((c) => outcomeOf(c) === "failed"),
      cron.spec.failedJobsHistoryLimit
    ),
    ...beyondLimit(
      children.filter((c) => outcomeOf(c) === "succeeded"),
      cron.spec.successfulJobsHistoryLimit
    )
  ]
  for (const name of remove) events.push({ type: "Normal", reason: "SuccessfulDelete", message: `Deleted job ${name}` })
  const status = (running: ReadonlyArray<ObjectReference>, scheduled: number | undefined): AdvancedCronJobStatus => {
    const { active: _, lastScheduleTime: __, ...rest } = base
    return {
      ...rest,
      ...(running.length === 0 ? {} : { active: running }),
      ...(scheduled === undefined ? {} : { lastScheduleTime: rfc3339(scheduled) })
    }
  }
  const current = status(active.map(referenceTo), lastScheduled)
  const idle = (wakeAt: number | undefined): CronJobDecision => ({ status: current, create: undefined, delete: remove, events, wakeAt })
  if (cron.spec.paused) return idle(undefined)

  const schedule = parseSchedule(cron.spec.schedule, cron.spec.timeZone)
  // The decoder refused unparsable schedules already; nothing to run on one regardless.
  if (Result.isFailure(schedule)) return idle(undefined)
  const created = cron.metadata.creationTimestamp === undefined ? now : Date.parse(cron.metadata.creationTimestamp)
  const runs = dueRuns(schedule.success, lastScheduled ?? created, now, cron.spec.startingDeadlineSeconds)
  if (runs._tag === "TooManyMissed") {
    // As upstream: nothing is started and nothing is scheduled until the object changes.
    events.push({ type: "Warning", reason: "TooManyMissedTimes", message: tooManyMissedMessage })
    return idle(undefined)
  }
  const { lastMissed, next } = runs
  if (lastMissed === undefined) return idle(next)
  const deadline = cron.spec.startingDeadlineSeconds
  if (deadline !== undefined && lastMissed + deadline * 1000 < now) return idle(next)
  // As upstream, the run is not dropped: it starts when the active job finishes, if still within the deadline.
  if (cron.spec.concurrencyPolicy === "Forbid" && active.length > 0) return idle(next)
  const replaced = cron.spec.concurrencyPolicy === "Replace" ? active.map((c) => c.metadata.name ?? "") : []
  for (const name of replaced) events.push({ type: "Normal", reason: "SuccessfulDelete", message: `Deleted job ${name}` })
  const job = jobForRun(cron, lastMissed)
  const name = job.metadata.name ?? ""
  events.push({ type: "Normal", reason: "SuccessfulCreate", message: `Created job ${name}` })
  const stillActive = active.filter((c) => !replaced.includes(c.metadata.name ?? "")).map(referenceTo)
  const reference: ObjectReference = {
    apiVersion: preferredApiVersion,
    kind: "ImageListPullJob",
    name,
    namespace: cron.metadata.namespace ?? "default"
  }
  return {
    status: status([...stillActive, reference], lastMissed),
    create: job,
    delete: [...remove, ...replaced],
    events,
    wakeAt: next
  }
}
