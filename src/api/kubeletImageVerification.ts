/**
 * The kubelet's verification of pull credentials for images already on a node (KEP-2535, "ensure
 * secret pulled images"; feature gate KubeletEnsureSecretPulledImages, beta and on by default from
 * Kubernetes 1.35), as far as it concerns images preheat pulled: the kubelet did not pull them, so
 * it holds no record of who may use them and counts them as preloaded.
 *
 * What the kubelet does, from its code (kubernetes/kubernetes):
 * - pkg/kubelet/images/pullmanager/image_pull_policies.go: NeverVerify never asks for credentials;
 *   NeverVerifyPreloadedImages asks only for images the kubelet pulled itself; NeverVerifyAllowlistedImages
 *   asks for every image but the allowlisted ones; AlwaysVerify always asks.
 * - image_pull_manager.go MustAttemptImagePull: asked, an image without a record of a pull by the
 *   kubelet (preheat's) must be pulled again with the pod's own credentials; image_manager.go then
 *   fails a pod with imagePullPolicy Never (ErrImageNeverPull) and pulls for IfNotPresent.
 * - With the feature gate off nothing is verified: any pod starts any image on the node.
 */
import { Result, Schema } from "effect"
import { parseImageReference } from "./imageReference.ts"
import { described } from "./schemaExtras.ts"

/** imagePullCredentialsVerificationPolicy (k8s.io/kubelet/config/v1beta1 types.go). */
export const kubeletPolicies = ["NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages", "AlwaysVerify"] as const
export type KubeletPolicy = (typeof kubeletPolicies)[number]

/**
 * A node's policy as preheat reports it: the kubelet's, or Disabled (the configuration turns the
 * feature gate off: nothing is verified), or Unknown (no kubelet configuration could be read).
 */
export const nodeVerificationPolicies = [...kubeletPolicies, "Disabled", "Unknown"] as const
export type NodeVerificationPolicy = (typeof nodeVerificationPolicies)[number]

export const KubeletImageVerification = Schema.Struct({
  policy: Schema.Literals(nodeVerificationPolicies).pipe(
    described(
      "The kubelet's imagePullCredentialsVerificationPolicy as its configuration file says (the kubelet's default, " +
        "NeverVerifyPreloadedImages, when it sets none); Disabled when it turns the feature gate KubeletEnsureSecretPulledImages " +
        "off (nothing is verified); Unknown when the daemon could not read it (message says why)."
    )
  ),
  allowlist: Schema.optionalKey(
    Schema.Array(Schema.String).pipe(
      described("preloadedImagesVerificationAllowlist, with policy NeverVerifyAllowlistedImages: the images exempted from verification.")
    )
  ),
  source: Schema.optionalKey(Schema.String.pipe(described("The file (and drop-in files) the daemon read it from, as paths on the node."))),
  message: Schema.optionalKey(Schema.String.pipe(described("Why the policy is Unknown, or how it was found.")))
}).pipe(
  described(
    "How the node's kubelet verifies pull credentials for images it did not pull itself, such as preheat's (KEP-2535), " +
      "as read by the daemon from the kubelet's configuration file (preheat daemon --kubelet-config)."
  )
)
export type KubeletImageVerification = typeof KubeletImageVerification.Type

// --- preloadedImagesVerificationAllowlist, by the kubelet's rules (image_pull_policies.go) -----------

/** One allowlist entry as the kubelet reads it: a repository's full name, or a prefix ending in `/` (from `/*`). */
export type AllowlistPattern = { readonly kind: "exact"; readonly name: string } | { readonly kind: "prefix"; readonly prefix: string }

/** Go's unicode.IsSpace (the kubelet compares a pattern with strings.TrimSpace of it). */
const goSpace =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u

/** The repository name distribution's ParseNormalizedNamed(image).Name() gives: `nginx:1` is `docker.io/library/nginx`. */
export const repositoryName = (image: string): Result.Result<string, string> =>
  Result.mapBoth(parseImageReference(image), {
    onFailure: (e) => e.reason,
    onSuccess: (ref) => `${ref.domain}/${ref.path}`
  })

/**
 * An allowlist entry as the kubelet validates it (getAllowlistImagePattern): no surrounding
 * spaces; a wildcard only as a last path segment `/*`, with something before it; otherwise a full
 * repository name as normalised, without tag or digest (`nginx` is refused: the name is
 * `docker.io/library/nginx`). The error is the kubelet's words; it refuses to start with such an entry.
 */
export const allowlistPattern = (pattern: string): Result.Result<AllowlistPattern, string> => {
  if (goSpace.test(pattern)) return Result.fail(`leading/trailing spaces are not allowed: ${pattern}`)
  const wildcard = pattern.endsWith("/*")
  const trimmed = wildcard ? pattern.slice(0, -1) : pattern
  if (trimmed.length === 0) return Result.fail(`the supplied pattern is too short: ${pattern}`)
  if (trimmed.includes("*")) return Result.fail(`not a valid wildcard pattern, only patterns ending with '/*' are allowed: ${pattern}`)
  if (wildcard) {
    // Not parsed further: `foo/*` is a prefix no normalised name starts with, and the kubelet takes it.
    return trimmed.length === 1
      ? Result.fail("at least registry hostname is required")
      : Result.succeed({ kind: "prefix", prefix: trimmed })
  }
  const name = repositoryName(trimmed)
  if (Result.isFailure(name)) return Result.fail(`failed to parse as an image name: ${name.failure}`)
  if (name.success !== trimmed) return Result.fail(`neither tag nor digest is accepted in an image reference: ${pattern}`)
  return Result.succeed({ kind: "exact", name: trimmed })
}

/** The first entry the kubelet would refuse, in its words; undefined when it takes them all. */
export const allowlistProblem = (patterns: ReadonlyArray<string>): string | undefined => {
  for (const pattern of patterns) {
    const parsed = allowlistPattern(pattern)
    if (Result.isFailure(parsed)) return parsed.failure
  }
  return undefined
}

/**
 * Whether the allowlist exempts an image (as a pod names it, or a NodeImage key): its normalised
 * repository name equals an entry or starts with a wildcard entry's prefix. An image that does not
 * parse matches nothing (the kubelet then asks for credentials). Entries the kubelet refuses count
 * for nothing: it would not run with them.
 */
export const allowlisted = (patterns: ReadonlyArray<string>, image: string): boolean => {
  const name = repositoryName(image)
  if (Result.isFailure(name)) return false
  return patterns.some((pattern) => {
    const parsed = allowlistPattern(pattern)
    if (Result.isFailure(parsed)) return false
    return parsed.success.kind === "exact" ? parsed.success.name === name.success : name.success.startsWith(parsed.success.prefix)
  })
}

/** The allowlist entry that exempts exactly this image's repository (any tag or digest of it). */
export const allowlistEntry = (image: string): Result.Result<string, string> => repositoryName(image)

// --- what a node's policy means for an image preheat pulled there ------------------------------------

/**
 * - unverified: any pod on the node can start the image without credentials of its own;
 * - reverified: a pod starting it first checks its own credentials with the registry (IfNotPresent:
 *   a pull, a registry round trip; Never: fails unless the kubelet pulled it before for the same
 *   credentials);
 * - unknown: the node's policy is not known.
 */
export type PreloadedAccess = "unverified" | "reverified" | "unknown"

export interface PreloadedVerdict {
  readonly access: PreloadedAccess
  /** The setting that decides it, for messages: `NeverVerifyPreloadedImages`, `NeverVerifyAllowlistedImages (not allowlisted)`. */
  readonly why: string
}

const unknown: PreloadedVerdict = { access: "unknown", why: "policy unknown" }

/**
 * What a node's kubelet does with an image it did not pull itself (`image`: a reference or a
 * NodeImage key), by the node's reported policy. Under NeverVerifyPreloadedImages an image the
 * kubelet has also pulled itself (the same image id) is verified after all; preheat cannot see the
 * kubelet's records and takes the image for preloaded, as it pulled it.
 */
export const preloadedVerdict = (verification: KubeletImageVerification | undefined, image: string): PreloadedVerdict => {
  switch (verification?.policy) {
    case undefined:
    case "Unknown":
      return unknown
    case "Disabled":
      return { access: "unverified", why: "KubeletEnsureSecretPulledImages off" }
    case "NeverVerify":
    case "NeverVerifyPreloadedImages":
      return { access: "unverified", why: verification.policy }
    case "AlwaysVerify":
      return { access: "reverified", why: verification.policy }
    case "NeverVerifyAllowlistedImages":
      return allowlisted(verification.allowlist ?? [], image)
        ? { access: "unverified", why: "NeverVerifyAllowlistedImages (allowlisted)" }
        : { access: "reverified", why: "NeverVerifyAllowlistedImages (not allowlisted)" }
  }
}
