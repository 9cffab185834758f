import { Data, Effect } from "effect"
import type { ObjectReference } from "../../api/meta.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import { resources } from "../../kube/resources.ts"
import type { OwnerPolicy } from "./pinDecision.ts"

/** An owner job could not be read (API server unreachable, access refused): pins stay as they are. */
export class OwnerPolicyUnknown extends Data.TaggedError("OwnerPolicyUnknown")<{ readonly message: string }> {}

const isJob = (owner: ObjectReference): owner is ObjectReference & { name: string; namespace: string; uid: string } =>
  owner.kind === "ImagePullJob" && owner.name !== undefined && owner.namespace !== undefined && owner.uid !== undefined

const policyOf = (job: { readonly [field: string]: unknown }): OwnerPolicy => {
  const spec = job["spec"] as { readonly completionPolicy?: { readonly type?: unknown } } | undefined
  // The API server defaults the type to Always (SPEC §1); only an explicit Never counts.
  return spec?.completionPolicy?.type === "Never" ? "Never" : "Always"
}

/**
 * The completion policy of each owner job, by uid. A NodeImage tag carries only owner references
 * (upstream's schema has no policy field, and the pull policy the controller writes does not tell
 * Never from Always for certain), so the job itself is read: one GET per distinct job. A job that
 * is gone, or was re-created under the same name (another uid), is `gone`. Owners that are not
 * ImagePullJobs have no policy and are left out.
 */
export const readOwnerPolicies = (
  owners: ReadonlyArray<ObjectReference>
): Effect.Effect<ReadonlyMap<string, OwnerPolicy>, OwnerPolicyUnknown, KubeApi> =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const jobs = owners.filter(isJob)
    const read = yield* Effect.forEach(
      jobs,
      (owner) =>
        api.get(resources.imagePullJob, { namespace: owner.namespace, name: owner.name }).pipe(
          Effect.map((job): OwnerPolicy => (job.metadata.uid === owner.uid ? policyOf(job) : "gone")),
          Effect.catchTag("NotFound", () => Effect.succeed<OwnerPolicy>("gone")),
          Effect.mapError(
            (error) => new OwnerPolicyUnknown({ message: `reading ImagePullJob ${owner.namespace}/${owner.name}: ${error.message}` })
          ),
          Effect.map((policy) => [owner.uid, policy] as const)
        ),
      { concurrency: 4 }
    )
    return new Map(read)
  })
