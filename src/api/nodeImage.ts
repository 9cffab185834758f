import { Schema } from "effect"
import { imagePullPolicies, SandboxConfig } from "./jobTemplate.ts"
import { KubeletImageVerification } from "./kubeletImageVerification.ts"
import { quoteCel } from "./goQuoteCel.ts"
import { ObjectMeta, ObjectReference } from "./meta.ts"
import {
  counter,
  described,
  Int64,
  NonNegativeInt32,
  NonNegativeInt64,
  PositiveInt32,
  PositiveInt64,
  servedFrom,
  Timestamp,
  withDefault,
  withOpenApi
} from "./schemaExtras.ts"

export const maxNodeImages = 256
/**
 * A bound that keeps the CRD's CEL cost estimate finite. Upstream has no limit on tags, and the
 * controller writes one per distinct tag jobs ask of a node, so this must not be reached in use:
 * 2048 tags of one image (a few hundred bytes each, with their status) make a NodeImage of about
 * the API server's largest request.
 */
const maxTagsPerImage = 2048
/**
 * The duplicate-tag check is quadratic, so the CRD rule compares the first tags of each image only
 * (the controller never writes a duplicate); the decoder compares them all.
 */
const celDuplicateTagPositions = 16

const tagPhases = ["Waiting", "Pulling", "Succeeded", "Failed"] as const
export type TagPhase = (typeof tagPhases)[number]

export const TagPullPolicy = Schema.Struct({
  timeoutSeconds: Schema.optionalKey(PositiveInt32.pipe(described("Timeout of one pull attempt, in seconds. Defaults to 600."))),
  backoffLimit: Schema.optionalKey(NonNegativeInt32.pipe(described("Retries after a failed attempt. Defaults to 3."))),
  ttlSecondsAfterFinished: Schema.optionalKey(
    NonNegativeInt32.pipe(described("Seconds after the pull finished when the controller removes the tag."))
  ),
  activeDeadlineSeconds: Schema.optionalKey(PositiveInt64.pipe(described("Deadline of all attempts, in seconds from createdAt.")))
}).pipe(described("How to pull this tag and when to forget it."))
export type TagPullPolicy = typeof TagPullPolicy.Type

/**
 * A tag (at most 128 characters by the reference grammar) or a digest, the longest of which the
 * grammar accepts is `sha512:` and 128 hex digits: any less and the API server refuses the
 * controller's task for a job pinned to a sha512 digest.
 */
const maxTagLength = "sha512:".length + 128

export const ImageTagSpec = Schema.Struct({
  tag: Schema.String.pipe(withOpenApi({ maxLength: maxTagLength }), described("The tag, or a digest sha256:... to pull by digest.")),
  createdAt: Schema.optionalKey(Timestamp.pipe(described("When the task was written; the controller sets it if absent."))),
  pullPolicy: Schema.optionalKey(TagPullPolicy),
  ownerReferences: Schema.optionalKey(
    Schema.Array(ObjectReference).pipe(described("The jobs that asked for this tag. Absent for hand-written tasks."))
  ),
  // Negative versions decode so that validation can name the tag in its message.
  version: Int64.pipe(described("Bumped to ask for the tag to be pulled again."), withDefault(0)),
  imagePullPolicy: Schema.Literals(imagePullPolicies).pipe(
    described("IfNotPresent: skip when the node has the image. Always: pull anyway. Defaults to IfNotPresent."),
    withDefault("IfNotPresent")
  )
})
export type ImageTagSpec = typeof ImageTagSpec.Type

// Neither field is required, as upstream's schema: a reference missing one is reported by the daemon.
export const ReferenceObject = Schema.Struct({
  namespace: Schema.optionalKey(Schema.String.pipe(described("Namespace of the secret."))),
  name: Schema.optionalKey(Schema.String.pipe(described("Name of the secret."))),
  mode: Schema.optionalKey(
    Schema.String.pipe(
      servedFrom("v1beta1"),
      described("Upstream's secret synchronisation mode (batch: cleaned up with the image); kept as written.")
    )
  )
})
export type ReferenceObject = typeof ReferenceObject.Type

export const ImageSpec = Schema.Struct({
  pullSecrets: Schema.optionalKey(
    Schema.Array(ReferenceObject).pipe(described("Pull secrets (copies in the daemon's namespace) for this image."))
  ),
  sandboxConfig: Schema.optionalKey(SandboxConfig),
  tags: Schema.Array(ImageTagSpec).pipe(withOpenApi({ maxItems: maxTagsPerImage }), described("The tags of this image to pull."))
})
export type ImageSpec = typeof ImageSpec.Type

const tagPositions = `[${Array.from({ length: celDuplicateTagPositions }, (_, i) => i).join(", ")}]`
/**
 * No tag among the first celDuplicateTagPositions of `tags` equals an earlier one. An image with
 * one tag (nearly all of them) is settled by the first test: the position lists cost their 16 x 16
 * steps on every write of the image map otherwise (the controller writes it once per node and job).
 */
const uniqueLeadingTags = (tags: string): string =>
  `(size(${tags}) <= 1 || ${tagPositions}.all(i, i >= size(${tags}) || ${tagPositions}.all(j, j >= i || ${tags}[i].tag != ${tags}[j].tag)))`

const imagesCelRules = [
  {
    rule: `size(self) <= ${maxNodeImages}`,
    messageExpression: `'spec images length ' + string(size(self)) + ' can not be more than ${maxNodeImages}'`
  },
  { rule: "self.all(name, name != '')", message: "image name can not be empty" },
  {
    rule: "self.all(name, self[name].tags.all(t, t.tag != ''))",
    messageExpression: `[self.filter(name, self[name].tags.exists(t, t.tag == ''))[0]].map(name, 'tag for image ' + ${quoteCel("name")} + ' can not be empty')[0]`
  },
  {
    rule: `self.all(name, ${uniqueLeadingTags("self[name].tags")})`,
    // The first tag equal to an earlier one: the decoder's first message for the image. Names and tags
    // are quoted as the decoder quotes them (goQuoteCel.ts); the image is bound by mapping over a
    // one-element list, so the quoting is costed once rather than once per image.
    messageExpression:
      `[self.filter(name, !${uniqueLeadingTags("self[name].tags")})[0]].map(name, [self[name].tags[` +
      `${tagPositions}.filter(i, i < size(self[name].tags) && ${tagPositions}.exists(j, j < i && ` +
      `self[name].tags[i].tag == self[name].tags[j].tag))[0]].tag].map(tag, 'duplicated tag ' + ${quoteCel("tag")} + ` +
      `' for image ' + ${quoteCel("name")})[0])[0]`
  },
  {
    rule: "self.all(name, self[name].tags.all(t, !has(t.version) || t.version >= 0))",
    messageExpression:
      "[self.filter(name, self[name].tags.exists(t, has(t.version) && t.version < 0))[0]].map(name, " +
      "[name + ':' + self[name].tags.filter(t, has(t.version) && t.version < 0)[0].tag].map(ref, " +
      `'version for ' + ${quoteCel("ref")} + ' can not be less than 0')[0])[0]`
  }
]

export const NodeImageSpec = Schema.Struct({
  images: Schema.optionalKey(
    Schema.Record(Schema.String.pipe(withOpenApi({ maxLength: 255 })), ImageSpec).pipe(
      withOpenApi({ maxProperties: maxNodeImages + 1, "x-kubernetes-validations": imagesCelRules }),
      described("Images to pull on this node, keyed by name without tag (e.g. nginx, registry.k8s.io/pause).")
    )
  )
}).pipe(described("The pull tasks of this node, written by the controller (or by hand for one node)."))
export type NodeImageSpec = typeof NodeImageSpec.Type

/** A bound for the CRD's CEL cost; a node's config names a handful of providers. */
const maxCredentialProvidersPerTag = 64

export const TagCredentialProvider = Schema.Struct({
  name: Schema.String.pipe(withOpenApi({ maxLength: 253 }), described("The provider's name in the credential provider config.")),
  renewedAt: Schema.optionalKey(
    Timestamp.pipe(
      described(
        "When the daemon found the provider answering for the image otherwise than at the failed attempt: the controller " +
          "then gives a job's failed tag its next version (Normal event CredentialsChanged)."
      )
    )
  )
}).pipe(described("A credential provider asked for the image at the tag's failed attempt."))
export type TagCredentialProvider = typeof TagCredentialProvider.Type

export const ImageTagStatus = Schema.Struct({
  tag: Schema.String.pipe(described("The tag or digest.")),
  phase: Schema.Literals(tagPhases).pipe(described("Waiting, Pulling, Succeeded or Failed.")),
  progress: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 })).pipe(
      withOpenApi({ format: "int32" }),
      described("Bytes pulled, in percent.")
    )
  ),
  startTime: Schema.optionalKey(Timestamp.pipe(described("When the pull started."))),
  completionTime: Schema.optionalKey(Timestamp.pipe(described("When the pull finished."))),
  version: Schema.optionalKey(NonNegativeInt64.pipe(described("The spec version this status is for."))),
  imageID: Schema.optionalKey(Schema.String.pipe(described("The image id the runtime reported."))),
  digest: Schema.optionalKey(
    Schema.String.pipe(
      described(
        "The manifest digest (sha256:...) the tag resolved to on this node: the runtime's repo digest of the image for this " +
          "image's repository. Set on success; absent when the runtime reports none. Nodes of one job with different digests " +
          "mean the tag moved while they pulled (the job's DigestMismatch condition)."
      )
    )
  ),
  authenticated: Schema.optionalKey(
    Schema.Boolean.pipe(
      described(
        "True when the pull that succeeded presented registry credentials (any but an anonymous pull) that the registry took; absent " +
          "when it pulled anonymously or the image was there already. The node's kubelet did not pull the image, so its " +
          "imagePullCredentialsVerificationPolicy (kubeletImageVerification) decides whether other pods may start it without " +
          "credentials (the job's PreloadedImageUnverified condition)."
      )
    )
  ),
  unreported: Schema.optionalKey(
    Schema.Boolean.pipe(
      described(
        "True on a Succeeded tag whose image the node's Node status.images leaves out, 2 minutes or more after the pull: the " +
          "node lists at least the daemon's --node-status-max-images images (the kubelet's nodeStatusMaxImages, its largest), " +
          "none of them by the tag or its digest, so the scheduler's ImageLocality plugin does not count it there (the job's " +
          "ImageUnreported condition). Absent otherwise."
      )
    )
  ),
  credentialProviders: Schema.optionalKey(
    Schema.Array(TagCredentialProvider).pipe(
      withOpenApi({ maxItems: maxCredentialProvidersPerTag }),
      described(
        "On a Failed tag whose last attempt the registry refused (or a credential provider failed for): the credential " +
          "providers (--image-credential-provider-config) asked for the image then. The daemon asks them again as their " +
          "answers expire (at least a minute apart; every 5 minutes for an answer it may not keep) and marks the ones whose " +
          "answer changed; never a credential."
      )
    )
  ),
  message: Schema.optionalKey(
    Schema.String.pipe(
      described(
        "Details, e.g. the last error. A tag not pulled because the runtime's image filesystem had less free room than " +
          "the daemon's --min-free-disk says `insufficient disk:` with the free, total and threshold figures (Event reason InsufficientDisk). " +
          "While the daemon waits out a registry's rate limit (HTTP 429) before retrying, it starts with `RegistryThrottled: `; the " +
          "controller then lowers that registry's concurrent pulls."
      )
    )
  )
})
export type ImageTagStatus = typeof ImageTagStatus.Type

export const ImageStatus = Schema.Struct({
  tags: Schema.Array(ImageTagStatus).pipe(described("Status of each tag."))
})
export type ImageStatus = typeof ImageStatus.Type

export const SyncStatus = Schema.Struct({
  syncAt: Schema.optionalKey(Timestamp.pipe(described("When the daemon finished its first pass."))),
  status: Schema.optionalKey(Schema.String.pipe(described("Succeeded or Failed."))),
  message: Schema.optionalKey(Schema.String.pipe(described("Details.")))
})
export type SyncStatus = typeof SyncStatus.Type

export const NodeImageStatus = Schema.Struct({
  desired: counter("Number of tags in the spec."),
  pulling: counter("Number of tags being pulled."),
  waiting: counter("Number of tags waiting for a free pull slot."),
  succeeded: counter("Number of tags pulled."),
  failed: counter("Number of tags that failed."),
  imageStatuses: Schema.optionalKey(
    Schema.Record(Schema.String, ImageStatus).pipe(described("Per-image, per-tag status, keyed like spec.images."))
  ),
  firstSyncStatus: Schema.optionalKey(SyncStatus.pipe(described("Set once every tag present when the daemon started has finished."))),
  kubeletImageVerification: Schema.optionalKey(KubeletImageVerification)
}).pipe(described("Status of the pull tasks, written by the daemon on the node."))
export type NodeImageStatus = typeof NodeImageStatus.Type

export const NodeImage = Schema.Struct({
  apiVersion: Schema.optionalKey(Schema.String),
  kind: Schema.optionalKey(Schema.String),
  metadata: ObjectMeta,
  spec: NodeImageSpec.pipe(withDefault({})),
  status: Schema.optionalKey(NodeImageStatus)
}).pipe(described("The images to pull on one node (same name and labels as the Node), and their status."))
export type NodeImage = typeof NodeImage.Type
