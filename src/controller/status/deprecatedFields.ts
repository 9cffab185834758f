import { deprecatedPullPolicyMessage, usesDeprecatedPullPolicy } from "../../api/pullPolicySpelling.ts"
import type { PullPolicySpelling } from "../../api/pullPolicySpelling.ts"
import type { ObjectEvent } from "../../kube/events.ts"

/** A job as far as its deprecated fields and the generation its status has seen go. */
interface Job {
  readonly metadata: { readonly generation?: number | undefined }
  readonly spec: PullPolicySpelling
  readonly status?: { readonly observedGeneration?: number | undefined } | undefined
}

/**
 * The DeprecatedField event of a job that spells a field the deprecated way, once per generation:
 * only while its status has not yet seen this generation (the reconcile that records it writes
 * status.observedGeneration). A Warning, as kube-apiserver's deprecation notices are warnings
 * (`Warning:` in kubectl) and as it asks the user to act; `kubectl events --types=Warning` lists it.
 */
export const deprecatedFieldEvents = (job: Job): ReadonlyArray<ObjectEvent> =>
  usesDeprecatedPullPolicy(job.spec) && job.status?.observedGeneration !== job.metadata.generation
    ? [{ type: "Warning", reason: "DeprecatedField", message: deprecatedPullPolicyMessage(job.spec) }]
    : []
