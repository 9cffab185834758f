// What wakes the planning of pull-secret copies (one key for all): a job whose pull secrets
// change, that finishes, starts going or goes, and any change of a copy.
import { Effect } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { after, before } from "../../kube/store.ts"
import type { Change, Stored } from "../../kube/store.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import { jobsReferencingSecrets } from "../imagePullJob/watches.ts"
import type { ControllerStores, Decoded } from "../stores.ts"
import type { Watch } from "../wake.ts"
import { holdingCopies } from "./copies.ts"
import type { Resynced } from "./sourceSecrets.ts"

/** The one key of the pull-secret copies reconcile: they are planned together. */
export const allSecretCopies = "all"

/**
 * The pull secrets a job references, as the reconcile counts them: an invalid, finished or
 * going job references none.
 */
const pullSecretsOf = (job: Stored<Decoded<ImagePullJob>> | undefined) => JSON.stringify(holdingCopies(job)?.spec.pullSecrets ?? null)

/** The copies are planned again when a job's pull secrets change, when it finishes, and when it begins to go or is gone. */
export const copiesForJob = (change: Change<Decoded<ImagePullJob>>): Array<string> =>
  pullSecretsOf(before(change)) !== pullSecretsOf(after(change)) ? [allSecretCopies] : []

/** A copy changed or went (by hand, say): the copies are planned again. */
export const copiesForCopy = (_change: Change): Array<string> => [allSecretCopies]

/** What the pull-secrets reconciler watches (the source secrets it polls: sourceSecretsResynced). */
export const pullSecretsWatches = (queue: WorkQueue) => ({
  jobs: [{ queue, keys: copiesForJob }] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>,
  secretCopies: [{ queue, keys: copiesForCopy }] satisfies ReadonlyArray<Watch<KubeObject>>
})

/**
 * What a resync of the source secrets wakes (they are polled, not watched: sourceSecrets.ts). For
 * those that changed, appeared or went: the jobs naming them, and the copies; for a secret no
 * longer usable, also the NodeImages of those jobs, which drop their references to its copy (it
 * is deleted).
 */
export const sourceSecretsResynced =
  (
    queues: { readonly imagePullJob: WorkQueue; readonly nodeImage: WorkQueue; readonly pullSecrets: WorkQueue },
    stores: Pick<ControllerStores, "jobs" | "nodeImages">
  ) =>
  ({ changed, withdrawn }: Resynced): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (changed.length === 0) return Effect.void
      const jobs = jobsReferencingSecrets(new Set(changed), stores.jobs)
      const nodes = new Set(
        jobsReferencingSecrets(new Set(withdrawn), stores.jobs).flatMap((key) => [
          ...stores.nodeImages.indexes.owners.nodesOf(stores.jobs.get(key)?.metadata.uid ?? "")
        ])
      )
      return Effect.andThen(
        Effect.forEach(jobs, (key) => queues.imagePullJob.add(key), { discard: true }),
        Effect.andThen(
          Effect.forEach(nodes, (node) => queues.nodeImage.add(node), { discard: true }),
          queues.pullSecrets.add(allSecretCopies)
        )
      )
    })
