import { Result } from "effect"
import { quoteBounded } from "./goQuote.ts"
import {
  advancedCronJobNameMaxLength,
  advancedCronJobNameMessage,
  advancedCronJobNamePattern,
  bothTimeZonesMessage,
  completionPolicyOnlyAlwaysMessage,
  emptyTimeZoneMessage,
  localTimeZoneMessage,
  manyTemplatesMessage,
  maxTemplateActiveDeadlineSeconds,
  maxTemplateTtlSecondsAfterFinished,
  missingTemplateMessage,
  templateDeadlineMessage,
  templateTtlMessage
} from "./advancedCronJob.ts"
import type { AdvancedCronJob, AdvancedCronJobSpec, ImageListPullJobTemplate, TemplateKind } from "./advancedCronJob.ts"
import { isKnownTimeZone, parseSchedule } from "./cronSchedule.ts"
import type { FieldError } from "./invalidObject.ts"
import { validateImageListPullJobSpec } from "./jobValidation.ts"

const namePattern = new RegExp(advancedCronJobNamePattern)

const validateName = (name: string | undefined): ReadonlyArray<FieldError> => {
  if (name === undefined) return []
  return [
    ...(namePattern.test(name) ? [] : [{ path: "metadata.name", message: advancedCronJobNameMessage }]),
    ...(name.length > advancedCronJobNameMaxLength
      ? [{ path: "metadata.name", message: `must be no more than ${advancedCronJobNameMaxLength} characters` }]
      : [])
  ]
}

const validateTimeZone = (zone: string | undefined): ReadonlyArray<FieldError> => {
  if (zone === undefined) return []
  if (zone === "") return [{ path: "spec.timeZone", message: emptyTimeZoneMessage }]
  if (zone.toLowerCase() === "local") return [{ path: "spec.timeZone", message: localTimeZoneMessage }]
  return isKnownTimeZone(zone) ? [] : [{ path: "spec.timeZone", message: `unknown time zone ${quoteBounded(zone)}` }]
}

/** Which template the cron job carries (upstream's FindTemplateKind), or none. */
export const templateKindOf = (spec: AdvancedCronJobSpec): TemplateKind | undefined =>
  spec.template.jobTemplate !== undefined
    ? "Job"
    : spec.template.imageListPullJobTemplate !== undefined
      ? "ImageListPullJob"
      : spec.template.broadcastJobTemplate !== undefined
        ? "BroadcastJob"
        : undefined

const validateTemplates = (spec: AdvancedCronJobSpec): ReadonlyArray<FieldError> => {
  const { broadcastJobTemplate, imageListPullJobTemplate, jobTemplate } = spec.template
  const count = [jobTemplate, broadcastJobTemplate, imageListPullJobTemplate].filter((t) => t !== undefined).length
  if (count === 0) return [{ path: "spec.template", message: missingTemplateMessage }]
  if (count > 1) return [{ path: "spec.template", message: manyTemplatesMessage }]
  return imageListPullJobTemplate === undefined ? [] : validateImageListPullJobTemplate(imageListPullJobTemplate)
}

const templatePath = "spec.template.imageListPullJobTemplate"

/** The ImageListPullJob rules at the template's paths, and the proposal's limits for scheduled jobs. */
const validateImageListPullJobTemplate = (template: ImageListPullJobTemplate): ReadonlyArray<FieldError> => {
  const { activeDeadlineSeconds, ttlSecondsAfterFinished, type } = template.spec.completionPolicy
  const at = `${templatePath}.spec.completionPolicy`
  return [
    ...validateImageListPullJobSpec(template.spec).map((e) => ({ ...e, path: `${templatePath}.${e.path}` })),
    ...(type === "Always" ? [] : [{ path: `${at}.type`, message: completionPolicyOnlyAlwaysMessage(type) }]),
    ...(activeDeadlineSeconds !== undefined && activeDeadlineSeconds > maxTemplateActiveDeadlineSeconds
      ? [{ path: `${at}.activeDeadlineSeconds`, message: templateDeadlineMessage(activeDeadlineSeconds) }]
      : []),
    ...(ttlSecondsAfterFinished !== undefined && ttlSecondsAfterFinished > maxTemplateTtlSecondsAfterFinished
      ? [{ path: `${at}.ttlSecondsAfterFinished`, message: templateTtlMessage(ttlSecondsAfterFinished) }]
      : [])
  ]
}

const validateSchedule = (spec: AdvancedCronJobSpec): ReadonlyArray<FieldError> => {
  const errors: Array<FieldError> = []
  if (spec.timeZone !== undefined && spec.schedule.includes("TZ")) {
    errors.push({ path: "spec.schedule", message: bothTimeZonesMessage })
  }
  // An unusable timeZone is reported on its own field; the schedule is then read in UTC.
  const zone = spec.timeZone !== undefined && validateTimeZone(spec.timeZone).length === 0 ? spec.timeZone : undefined
  const parsed = parseSchedule(spec.schedule, zone)
  if (Result.isFailure(parsed)) errors.push({ path: "spec.schedule", message: parsed.failure })
  return errors
}

/** Upstream's AdvancedCronJob webhook rules, every one checked so all are reported together. */
export const validateAdvancedCronJob = (job: AdvancedCronJob): ReadonlyArray<FieldError> => [
  ...validateName(job.metadata.name),
  ...validateSchedule(job.spec),
  ...validateTimeZone(job.spec.timeZone),
  ...validateTemplates(job.spec)
]
