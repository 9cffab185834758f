import { Schema } from "effect"
import { deadlineCelRule, jobSpecCelRules, jobTemplateFields } from "./jobTemplate.ts"
import { imageCelRules, maxImageLength } from "./imageReferenceCel.ts"
import { Condition, ObjectMeta } from "./meta.ts"
import { counter, described, NonNegativeInt64, Timestamp, withOpenApi } from "./schemaExtras.ts"

export const ImagePullJobSpec = Schema.Struct({
  image: Schema.String.pipe(
    withOpenApi({ maxLength: maxImageLength, "x-kubernetes-validations": imageCelRules }),
    described("The image to pull: name[:tag] or name@sha256:digest, e.g. nginx:1.9.1.")
  ),
  ...jobTemplateFields
}).pipe(
  withOpenApi({ "x-kubernetes-validations": [...jobSpecCelRules, deadlineCelRule] }),
  described("What to pull, where, how fast and for how long.")
)
export type ImagePullJobSpec = typeof ImagePullJobSpec.Type

/** The condition of a job whose nodes resolved its image to more than one digest (the controller's, read by `preheat status`). */
export const digestMismatch = "DigestMismatch"
/** The condition of a job that seeds (the controller's seed-first fan-out, read by `preheat status`): True once its seed nodes pulled. */
export const seeded = "Seeded"
/** The condition of a job whose image needs credentials while nodes' kubelets let any pod start it without them (KEP-2535). */
export const preloadedImageUnverified = "PreloadedImageUnverified"
/** The condition of a job whose nodes' kubelets make a pod starting its image check its credentials with the registry first. */
export const preloadedImageReverified = "PreloadedImageReverified"
/** The condition of a job whose image is on nodes whose Node status.images leaves it out (the kubelet's nodeStatusMaxImages). */
export const imageUnreported = "ImageUnreported"

export const ImageDigestCount = Schema.Struct({
  digest: Schema.String.pipe(described("A manifest digest, sha256:...")),
  nodes: counter("Number of the job's nodes whose pull resolved to this digest.")
}).pipe(described("One digest the job's image resolved to, and on how many nodes."))
export type ImageDigestCount = typeof ImageDigestCount.Type

export const ImagePullJobStatus = Schema.Struct({
  startTime: Schema.optionalKey(Timestamp.pipe(described("When the job started."))),
  completionTime: Schema.optionalKey(Timestamp.pipe(described("When the job completed (Always jobs)."))),
  desired: counter("Number of nodes the image is to be pulled on."),
  active: counter("Number of nodes pulling the image now."),
  succeeded: counter("Number of nodes that pulled the image."),
  failed: counter("Number of nodes that failed to pull the image."),
  failedNodes: Schema.optionalKey(Schema.Array(Schema.String).pipe(described("Names of the nodes that failed, sorted."))),
  message: Schema.optionalKey(Schema.String.pipe(described("Progress in words, e.g. job is running, progress 42.0%."))),
  imageDigests: Schema.optionalKey(
    Schema.Array(ImageDigestCount).pipe(
      described(
        "The digests the image resolved to on the job's nodes that pulled it (their NodeImage tag status digest), with " +
          "the number of nodes for each, most nodes first. More than one means the tag moved during the job: see the " +
          "DigestMismatch condition; with imagePullPolicy Always, a new generation of the job pulls again on every node."
      )
    )
  ),
  conditions: Schema.optionalKey(
    Schema.Array(Condition).pipe(
      described(
        "Standard conditions: Valid, Complete, PullSecretInvalid, DigestMismatch (True while the job's nodes resolved " +
          "the image to more than one digest; its message names the digests and a few nodes of each), and ImageUnreported " +
          "(True while nodes that pulled the image leave it out of their Node status.images, so that the scheduler's " +
          "ImageLocality plugin does not count it: the kubelet's nodeStatusMaxImages)."
      )
    )
  ),
  observedGeneration: Schema.optionalKey(NonNegativeInt64.pipe(described("The metadata.generation this status was computed for.")))
}).pipe(described("Progress of the job, written by the controller."))
export type ImagePullJobStatus = typeof ImagePullJobStatus.Type

export const ImagePullJob = Schema.Struct({
  apiVersion: Schema.optionalKey(Schema.String),
  kind: Schema.optionalKey(Schema.String),
  metadata: ObjectMeta,
  spec: ImagePullJobSpec,
  status: Schema.optionalKey(ImagePullJobStatus)
}).pipe(described("Pulls one image onto a set of nodes ahead of the workloads that need it."))
export type ImagePullJob = typeof ImagePullJob.Type
