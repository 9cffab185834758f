// The seed's spelling of the pull policy (issue 26): the pull request that proposed the feature to
// OpenKruise (for its issue openkruise/kruise#1267; ../shared/seeds/) wrote
// `spec.pullPolicy.type: Always`; upstream later shipped `spec.imagePullPolicy`. Both are accepted,
// the old one as deprecated: read only when imagePullPolicy is unset, refused when the two
// disagree, and announced with an event.
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

/**
 * What the DeprecatedField event says: which field to use instead, and how the job reads now.
 * `at` is where the spec is in the object (an AdvancedCronJob's template has one too).
 */
export const deprecatedPullPolicyMessage = (spec: PullPolicySpelling, at = "spec"): string =>
  spec.imagePullPolicy === undefined
    ? `${at}.pullPolicy.type is deprecated: use ${at}.imagePullPolicy (pulling with ${effectiveImagePullPolicy(spec)}, as ${at}.pullPolicy.type says)`
    : `${at}.pullPolicy.type is deprecated: use ${at}.imagePullPolicy alone (it is set, so ${at}.pullPolicy.type is not read)`

/**
 * The spec spelt as upstream, for the jobs the controller creates from it (an ImageListPullJob's
 * children, an AdvancedCronJob's runs): the deprecated pullPolicy.type read into imagePullPolicy,
 * so they carry no deprecated field. The same object when there is none, and imagePullPolicy is
 * the decoded spec's last field, so a hash of the result is the same for either spelling.
 */
export const withUpstreamSpelling = <S extends PullPolicySpelling>(spec: S): S => {
  if (!usesDeprecatedPullPolicy(spec)) return spec
  const { type: _, ...pullPolicy } = spec.pullPolicy
  return { ...spec, pullPolicy, imagePullPolicy: effectiveImagePullPolicy(spec) }
}
