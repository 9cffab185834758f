// AdvancedCronJob (apps.kruise.io v1alpha1 and v1beta1, stored as v1beta1) as upstream serves it,
// with the ImageListPullJob template of upstream's proposal
// (docs/proposals/20250919-advancedcronjob-with-imagelistpulljob.md). preheat acts on
// imageListPullJobTemplate only; the Job and BroadcastJob templates are accepted as upstream's
// schema has them and reported as not supported.
//
// One schema for both versions, on purpose: upstream's v1alpha1 CRD lacks imageListPullJobTemplate
// (only its v1beta1 has it) and its conversion converts None, so kube-apiserver prunes the template
// from every v1alpha1 read, and a v1alpha1 write (kubectl edit, an old client's update) deletes it
// from storage. Its Go conversion (ConvertFrom) refuses such an object instead, but the conversion
// webhook is not enabled in its kustomization. Here the template is in both, so converting either
// way loses nothing, and the proposal's own v1alpha1 example applies.
import { Schema } from "effect"
import { emptyScheduleMessage, scheduleGrammar, scheduleHelp } from "./cronSchedule.ts"
import { maxQuotedCharacters, quoteBounded } from "./goQuote.ts"
import { quoteCel } from "./goQuoteCel.ts"
import { ImageListPullJobSpec } from "./imageListPullJob.ts"
import { Condition, ObjectMeta, ObjectReference } from "./meta.ts"
import { described, NonNegativeInt32, NonNegativeInt64, StringMap, Timestamp, withDefault, withOpenApi } from "./schemaExtras.ts"
import type { CelRule } from "./schemaExtras.ts"

const concurrencyPolicies = ["Allow", "Forbid", "Replace"] as const
export type ConcurrencyPolicy = (typeof concurrencyPolicies)[number]

/** Upstream's defaults (its mutating webhook, SetDefaultsAdvancedCronJob). */
const defaultSuccessfulJobsHistoryLimit = 3
const defaultFailedJobsHistoryLimit = 1

/** Upstream's limits for the ImageListPullJob template (the proposal's webhook rules). */
export const maxTemplateActiveDeadlineSeconds = 14_400
export const maxTemplateTtlSecondsAfterFinished = 86_400
/** Longest schedule the CRD accepts: bounds the cost of its rule for a real API server. */
const maxScheduleLength = 1024

export const advancedCronJobNameMaxLength = 63
export const advancedCronJobNamePattern = "^[a-zA-Z0-9\\-]+$"
export const advancedCronJobNameMessage =
  "AdvancedCronJob name must consist of alphanumeric characters or '-' " +
  `(e.g. 'example-com', regex used for validation is '${advancedCronJobNamePattern}')`

const literal = (text: string): string => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`

const templateKinds = ["Job", "BroadcastJob", "ImageListPullJob"] as const
export type TemplateKind = (typeof templateKinds)[number]

export const missingTemplateMessage =
  "spec must have one template, either JobTemplate, BroadcastJobTemplate or ImageListPullJobTemplate should be provided"
export const manyTemplatesMessage =
  "spec can have only one template, either JobTemplate, BroadcastJobTemplate or ImageListPullJobTemplate should be provided"
export const bothTimeZonesMessage = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
export const emptyTimeZoneMessage = "timeZone must be nil or non-empty string"
export const localTimeZoneMessage = "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"

const onlyAlways = "completionPolicy only support Always, current: "
export const completionPolicyOnlyAlwaysMessage = (type: string): string => `${onlyAlways}${quoteBounded(type)}`
export const templateDeadlineMessage = (value: number | string): string =>
  `activeDeadlineSeconds must be no more than ${maxTemplateActiveDeadlineSeconds}, current: ${value}`
export const templateTtlMessage = (value: number | string): string =>
  `ttlSecondsAfterFinished must be no more than ${maxTemplateTtlSecondsAfterFinished}, current: ${value}`

/** An object kept as written: preheat stores it and never reads inside it. */
const opaqueObject = (description: string) =>
  Schema.Struct({}).pipe(withOpenApi({ "x-kubernetes-preserve-unknown-fields": true }), described(description))

const TemplateMetadata = Schema.Struct({
  labels: Schema.optionalKey(StringMap.pipe(described("Labels of the jobs created from this template."))),
  annotations: Schema.optionalKey(StringMap.pipe(described("Annotations of the jobs created from this template.")))
}).pipe(
  // The rest of an ObjectMeta is kept, as upstream's webhook decodes a whole one; only these are copied.
  withOpenApi({ "x-kubernetes-preserve-unknown-fields": true }),
  described("Standard object's metadata of the jobs created from this template.")
)

const completionPolicy = "self.spec.completionPolicy"
const ImageListPullJobTemplate = Schema.Struct({
  metadata: Schema.optionalKey(TemplateMetadata),
  spec: ImageListPullJobSpec
}).pipe(
  withOpenApi({
    "x-kubernetes-validations": [
      {
        rule: `!has(${completionPolicy}) || !has(${completionPolicy}.type) || ${completionPolicy}.type == 'Always'`,
        messageExpression: `${literal(onlyAlways)} + ${quoteCel(`${completionPolicy}.type`, maxQuotedCharacters)}`,
        fieldPath: ".spec.completionPolicy.type"
      },
      {
        rule:
          `!has(${completionPolicy}) || !has(${completionPolicy}.activeDeadlineSeconds) || ` +
          `${completionPolicy}.activeDeadlineSeconds <= ${maxTemplateActiveDeadlineSeconds}`,
        messageExpression: `${literal(templateDeadlineMessage(""))} + string(${completionPolicy}.activeDeadlineSeconds)`,
        fieldPath: ".spec.completionPolicy.activeDeadlineSeconds"
      },
      {
        rule:
          `!has(${completionPolicy}) || !has(${completionPolicy}.ttlSecondsAfterFinished) || ` +
          `${completionPolicy}.ttlSecondsAfterFinished <= ${maxTemplateTtlSecondsAfterFinished}`,
        messageExpression: `${literal(templateTtlMessage(""))} + string(${completionPolicy}.ttlSecondsAfterFinished)`,
        fieldPath: ".spec.completionPolicy.ttlSecondsAfterFinished"
      }
    ]
  }),
  described("The ImageListPullJob created at each scheduled time (upstream's proposal): its metadata and spec.")
)
export type ImageListPullJobTemplate = typeof ImageListPullJobTemplate.Type

const BroadcastJobTemplate = Schema.Struct({
  metadata: Schema.optionalKey(TemplateMetadata),
  spec: Schema.optionalKey(opaqueObject("Specification of the desired behavior of the broadcastjob (not acted on by preheat)."))
}).pipe(described("Specifies the broadcastjob that will be created when executing a BroadcastCronJob. Not supported by preheat."))

const has = (field: string): string => `(has(self.${field}) ? 1 : 0)`
const templateCount = `${has("jobTemplate")} + ${has("broadcastJobTemplate")} + ${has("imageListPullJobTemplate")}`

const CronJobTemplate = Schema.Struct({
  jobTemplate: Schema.optionalKey(
    opaqueObject("Specifies the job that will be created when executing a CronJob. Not supported by preheat.")
  ),
  broadcastJobTemplate: Schema.optionalKey(BroadcastJobTemplate),
  imageListPullJobTemplate: Schema.optionalKey(ImageListPullJobTemplate)
}).pipe(
  withOpenApi({
    "x-kubernetes-validations": [
      { rule: `${templateCount} >= 1`, message: missingTemplateMessage },
      { rule: `${templateCount} <= 1`, message: manyTemplatesMessage }
    ]
  }),
  described("Specifies the job that will be created when executing a CronJob: exactly one template.")
)
export type CronJobTemplate = typeof CronJobTemplate.Type

// As upstream: startingDeadlineSeconds is an int64, the history limits int32.
const nonNegative = (description: string) => NonNegativeInt32.pipe(described(description))

const blank = literal("^\\s*$")
const scheduleCelRules: ReadonlyArray<CelRule> = [
  { rule: `!self.matches(${blank})`, message: emptyScheduleMessage },
  {
    rule: `self.matches(${blank}) || self.matches(${literal(scheduleGrammar)})`,
    messageExpression: `'invalid schedule ' + ${quoteCel("self", maxQuotedCharacters)} + ${literal(`: ${scheduleHelp}`)}`
  }
]

export const AdvancedCronJobSpec = Schema.Struct({
  schedule: Schema.String.pipe(
    withOpenApi({ maxLength: maxScheduleLength, "x-kubernetes-validations": scheduleCelRules }),
    described(
      "The schedule in Cron format (minute hour day-of-month month day-of-week, or @hourly, @daily, ..., @every 1h), " +
        "optionally after CRON_TZ=<zone> or TZ=<zone>; see https://en.wikipedia.org/wiki/Cron."
    )
  ),
  timeZone: Schema.optionalKey(
    Schema.String.pipe(
      withOpenApi({
        maxLength: 255,
        "x-kubernetes-validations": [
          { rule: "size(self) > 0", message: emptyTimeZoneMessage },
          { rule: "!self.matches('^[Ll][Oo][Cc][Aa][Ll]$')", message: localTimeZoneMessage }
        ]
      }),
      described("The IANA time zone of the schedule, e.g. Europe/Berlin. Defaults to UTC. Not with TZ= in the schedule.")
    )
  ),
  startingDeadlineSeconds: Schema.optionalKey(
    NonNegativeInt64.pipe(described("Optional deadline in seconds for starting the job if it misses scheduled time for any reason."))
  ),
  concurrencyPolicy: Schema.Literals(concurrencyPolicies).pipe(
    described(
      "How to treat concurrent runs: Allow (default) runs them side by side; Forbid skips a run while the " +
        "previous one is active; Replace deletes the active one and starts the new one."
    ),
    withDefault("Allow")
  ),
  paused: Schema.Boolean.pipe(described("Paused will pause the cron job: no new jobs are created."), withDefault(false)),
  successfulJobsHistoryLimit: nonNegative("The number of successful finished jobs to retain. Defaults to 3.").pipe(
    withDefault(defaultSuccessfulJobsHistoryLimit)
  ),
  failedJobsHistoryLimit: nonNegative("The number of failed finished jobs to retain. Defaults to 1.").pipe(
    withDefault(defaultFailedJobsHistoryLimit)
  ),
  template: CronJobTemplate
}).pipe(
  withOpenApi({
    "x-kubernetes-validations": [
      {
        rule: "!(has(self.timeZone) && self.schedule.contains('TZ'))",
        message: bothTimeZonesMessage,
        fieldPath: ".schedule"
      }
    ]
  }),
  described("AdvancedCronJobSpec defines the desired state of AdvancedCronJob.")
)
export type AdvancedCronJobSpec = typeof AdvancedCronJobSpec.Type

export const AdvancedCronJobStatus = Schema.Struct({
  type: Schema.optionalKey(Schema.String.pipe(described("The kind of job the template creates: Job, BroadcastJob or ImageListPullJob."))),
  active: Schema.optionalKey(Schema.Array(ObjectReference).pipe(described("A list of pointers to currently running jobs."))),
  lastScheduleTime: Schema.optionalKey(Timestamp.pipe(described("Information when was the last time the job was successfully scheduled."))),
  conditions: Schema.optionalKey(
    Schema.Array(Condition).pipe(described("Standard conditions: Supported (whether preheat acts on the template)."))
  )
}).pipe(described("AdvancedCronJobStatus defines the observed state of AdvancedCronJob."))
export type AdvancedCronJobStatus = typeof AdvancedCronJobStatus.Type

const advancedCronJobRootRules: ReadonlyArray<CelRule> = [
  {
    rule: `!has(self.metadata.name) || self.metadata.name.matches(${literal(advancedCronJobNamePattern)})`,
    message: advancedCronJobNameMessage,
    fieldPath: ".metadata.name"
  },
  {
    rule: `!has(self.metadata.name) || size(self.metadata.name) <= ${advancedCronJobNameMaxLength}`,
    message: `must be no more than ${advancedCronJobNameMaxLength} characters`,
    fieldPath: ".metadata.name"
  }
]

export const AdvancedCronJob = Schema.Struct({
  apiVersion: Schema.optionalKey(Schema.String),
  kind: Schema.optionalKey(Schema.String),
  metadata: ObjectMeta,
  spec: AdvancedCronJobSpec,
  status: Schema.optionalKey(AdvancedCronJobStatus)
}).pipe(
  withOpenApi({ "x-kubernetes-validations": advancedCronJobRootRules }),
  described("Creates jobs on a cron schedule; preheat creates ImageListPullJobs from imageListPullJobTemplate.")
)
export type AdvancedCronJob = typeof AdvancedCronJob.Type
