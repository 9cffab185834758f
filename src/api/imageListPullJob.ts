import { Schema } from "effect"
import { deadlineCelRule, jobSpecCelRules, jobTemplateFields } from "./jobTemplate.ts"
import { imageCelRules, maxImageLength } from "./imageReferenceCel.ts"
import { Condition, ObjectMeta } from "./meta.ts"
import { counter, described, NonNegativeInt64, Timestamp, withOpenApi } from "./schemaExtras.ts"

export const maxListImages = 255

export const ImageListPullJobSpec = Schema.Struct({
  images: Schema.Array(Schema.String.pipe(withOpenApi({ maxLength: maxImageLength, "x-kubernetes-validations": imageCelRules }))).pipe(
    Schema.check(Schema.isMinLength(1)),
    withOpenApi({
      // One above the rule's limit, so the rule, not maxItems, words the refusal of 256 images;
      // with maxImageLength it keeps the quadratic duplicate check within a rule's CEL budget.
      maxItems: maxListImages + 1,
      "x-kubernetes-validations": [
        { rule: `size(self) <= ${maxListImages}`, message: "the maximum number of images cannot > 255" },
        { rule: "self.all(x, self.exists_one(y, y == x))", message: "images cannot have duplicate values" }
      ]
    }),
    described("The images to pull, one child ImagePullJob each: 1 to 255, no duplicates.")
  ),
  ...jobTemplateFields
}).pipe(
  // The deadline rule too (upstream's ImageListPullJob webhook lacks it): the ImagePullJobs it
  // creates carry the same policies, and the API server would refuse every one of them.
  withOpenApi({ "x-kubernetes-validations": [...jobSpecCelRules, deadlineCelRule] }),
  described("The images to pull and the ImagePullJob settings shared by all of them.")
)
export type ImageListPullJobSpec = typeof ImageListPullJobSpec.Type

export const FailedImageStatus = Schema.Struct({
  imagePullJob: Schema.optionalKey(Schema.String.pipe(described("Name of the child ImagePullJob."))),
  name: Schema.optionalKey(Schema.String.pipe(described("The image."))),
  message: Schema.optionalKey(Schema.String.pipe(described("Why it failed.")))
})
export type FailedImageStatus = typeof FailedImageStatus.Type

export const ImageListPullJobStatus = Schema.Struct({
  startTime: Schema.optionalKey(Timestamp.pipe(described("When the job started."))),
  completionTime: Schema.optionalKey(Timestamp.pipe(described("When every child job completed (Always jobs)."))),
  desired: counter("Number of images."),
  active: counter("Number of child jobs still running."),
  completed: counter("Number of child jobs completed."),
  succeeded: counter("Number of child jobs that succeeded on every node."),
  failedImageStatuses: Schema.optionalKey(Schema.Array(FailedImageStatus).pipe(described("The images that failed on some node, sorted."))),
  conditions: Schema.optionalKey(
    Schema.Array(Condition).pipe(
      described(
        "Standard conditions: Valid, Complete, and DigestMismatch (True while a child job's nodes resolved its image to more " +
          "than one digest; its message names those images, the children's conditions the digests and nodes)."
      )
    )
  ),
  observedGeneration: Schema.optionalKey(NonNegativeInt64.pipe(described("The metadata.generation this status was computed for.")))
}).pipe(described("Progress aggregated from the child ImagePullJobs."))
export type ImageListPullJobStatus = typeof ImageListPullJobStatus.Type

export const ImageListPullJob = Schema.Struct({
  apiVersion: Schema.optionalKey(Schema.String),
  kind: Schema.optionalKey(Schema.String),
  metadata: ObjectMeta,
  spec: ImageListPullJobSpec,
  status: Schema.optionalKey(ImageListPullJobStatus)
}).pipe(described("Pulls a list of images onto a set of nodes, through one ImagePullJob per image."))
export type ImageListPullJob = typeof ImageListPullJob.Type
