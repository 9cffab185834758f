// What wakes the planning of pull-secret copies (one key for all): a job whose pull secrets
// change, that starts going or goes, and any change of a copy.
import { Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { after, before } from "../../kube/store.ts"
import type { Change, Stored } from "../../kube/store.ts"
import { allSecretCopies } from "../context.ts"
import type { ControllerContext } from "../context.ts"
import type { Decoded } from "../stores.ts"
import type { Watch } from "../wake.ts"

/** The pull secrets a job references, as the reconcile counts them: an invalid job references none. */
const pullSecretsOf = (job: Stored<Decoded<ImagePullJob>> | undefined) =>
  JSON.stringify(job !== undefined && Result.isSuccess(job.view) ? job.view.success.spec.pullSecrets : undefined)

/** The copies are planned again when a job's pull secrets change, and when it begins to go or is gone. */
export const copiesForJob = (change: Change<Decoded<ImagePullJob>>): Array<string> => {
  const old = before(change)
  const current = after(change)
  const deleting = current?.raw.metadata.deletionTimestamp !== old?.raw.metadata.deletionTimestamp
  return pullSecretsOf(old) !== pullSecretsOf(current) || deleting || change.type === "deleted" ? [allSecretCopies] : []
}

/** A copy changed or went (by hand, say): the copies are planned again. */
export const copiesForCopy = (_change: Change): Array<string> => [allSecretCopies]

/** What the pull-secrets reconciler watches (the source secrets it resyncs itself: controller.ts). */
export const pullSecretsWatches = (ctx: ControllerContext) => ({
  jobs: [{ queue: ctx.queues.pullSecrets, keys: copiesForJob }] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>,
  secretCopies: [{ queue: ctx.queues.pullSecrets, keys: copiesForCopy }] satisfies ReadonlyArray<Watch<KubeObject>>
})
