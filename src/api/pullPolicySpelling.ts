// The seed's spelling of the pull policy (issue 26): the pull request that proposed the feature to
// OpenKruise (openkruise/kruise#1267) wrote `spec.pullPolicy.type: Always`; upstream later shipped
// `spec.imagePullPolicy`. Both are accepted, the old one as deprecated: read only when
// imagePullPolicy is unset, refused when the two disagree, and announced with an event.
import type { ImagePullPolicy } from "./jobTemplate.ts"

/** The fields of a job's spec that say how to pull. */
export interface PullPolicySpelling {
  readonly imagePullPolicy?: ImagePullPolicy | undefined
  readonly pullPolicy: { readonly type?: ImagePullPolicy | undefined }
}

const defaultImagePullPolicy: ImagePullPolicy = "IfNotPresent"

/** The policy a job pulls with: imagePullPolicy, else the deprecated pullPolicy.type, else IfNotPresent. */
export const effectiveImagePullPolicy = (spec: PullPolicySpelling): ImagePullPolicy =>
  spec.imagePullPolicy ?? spec.pullPolicy.type ?? defaultImagePullPolicy

export const usesDeprecatedPullPolicy = (spec: PullPolicySpelling): boolean => spec.pullPolicy.type !== undefined

const advice = "pullPolicy.type is deprecated, set imagePullPolicy only"

export const pullPolicyConflictMessage = (type: string, imagePullPolicy: string): string =>
  `pullPolicy.type ${type} differs from imagePullPolicy ${imagePullPolicy}: ${advice}`

/** The API server's refusal of the two spellings set to different values (on a job's spec). */
export const pullPolicyConflictCelRule = {
  rule:
    "!has(self.imagePullPolicy) || !has(self.pullPolicy) || !has(self.pullPolicy.type) || " +
    "self.pullPolicy.type == self.imagePullPolicy",
  messageExpression: `'pullPolicy.type ' + self.pullPolicy.type + ' differs from imagePullPolicy ' + self.imagePullPolicy + ': ${advice}'`,
  fieldPath: ".pullPolicy.type"
} as const

/** What the DeprecatedField event says: which field to use instead, and how the job reads now. */
export const deprecatedPullPolicyMessage = (spec: PullPolicySpelling): string =>
  spec.imagePullPolicy === undefined
    ? `spec.pullPolicy.type is deprecated: use spec.imagePullPolicy (pulling with ${effectiveImagePullPolicy(spec)}, as spec.pullPolicy.type says)`
    : "spec.pullPolicy.type is deprecated: use spec.imagePullPolicy alone (it is set, so spec.pullPolicy.type is not read)"
