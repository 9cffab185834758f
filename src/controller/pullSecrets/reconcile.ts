import { Effect } from "effect"
import { KubeApi } from "../../kube/KubeApi.ts"
import { keyOf } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import type { ControllerStores, JobStore } from "../stores.ts"
import { holdingCopies, isCopy, planCopies } from "./copies.ts"
import type { SecretReference } from "./copies.ts"
import type { SourceSecretBook } from "./sourceSecrets.ts"

/** The secret references of every job that still needs its copies (alive, unfinished), grouped by source secret. */
const references = (jobs: JobStore): ReadonlyArray<SecretReference> => {
  const bySecret = new Map<string, { namespace: string; name: string; jobs: Array<string> }>()
  for (const stored of jobs.entries()) {
    const job = holdingCopies(stored)
    if (job === undefined) continue
    const { raw } = stored
    const namespace = raw.metadata.namespace ?? ""
    for (const name of job.spec.pullSecrets ?? []) {
      const key = keyOf(namespace, name)
      let ref = bySecret.get(key)
      if (ref === undefined) bySecret.set(key, (ref = { namespace, name, jobs: [] }))
      ref.jobs.push(keyOf(namespace, raw.metadata.name ?? ""))
    }
  }
  return [...bySecret.values()]
}

/** Creates, syncs and deletes the daemons' copies of pull secrets (SPEC §2 Pull secrets). */
export const reconcilePullSecrets = (
  stores: Pick<ControllerStores, "jobs" | "secretCopies">,
  namespace: string,
  sourceSecrets: SourceSecretBook
): Reconcile<KubeApi> => reconcileWith({ jobs: stores.jobs, secretCopies: stores.secretCopies, sourceSecrets }, namespace)

const reconcileWith = (
  ctx: Pick<ControllerStores, "jobs" | "secretCopies"> & { readonly sourceSecrets: SourceSecretBook },
  namespace: string
): Reconcile<KubeApi> =>
  Effect.fn("reconcile PullSecrets")(function* (_key: string) {
    const api = yield* KubeApi
    // The namespace's other Secrets (neither preheat's copies nor OpenKruise's) are not ours to touch.
    const copies = [...ctx.secretCopies.values()].filter((s) => s.metadata.namespace === namespace && isCopy(s))
    const referenced = references(ctx.jobs)
    ctx.sourceSecrets.retain(new Set(referenced.map((ref) => keyOf(ref.namespace, ref.name))))
    for (const ref of referenced) yield* ctx.sourceSecrets.read(ref.namespace, ref.name)
    // An unusable docker config is not copied: the daemons only ever read credentials they can use (the job says why).
    const plan = planCopies(referenced, ctx.sourceSecrets.usable, copies, namespace)
    for (const copy of plan.create) {
      const created = yield* api.create(resources.secret, copy).pipe(Effect.catchTag("AlreadyExists", () => Effect.succeed(undefined)))
      if (created !== undefined) yield* ctx.secretCopies.written(created)
    }
    for (const copy of plan.update) yield* ctx.secretCopies.written(yield* api.update(resources.secret, copy))
    for (const name of plan.delete) {
      yield* api.delete(resources.secret, { name, namespace }).pipe(Effect.catchTag("NotFound", () => Effect.void))
      yield* ctx.secretCopies.removed(keyOf(namespace, name))
    }
    return {}
  }, Effect.mapError(retryable))
