import { Data, Effect, Result } from "effect"
import { KubeApi } from "../kube/KubeApi.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"
import { allowlistEntries, type JobImages, jobImages, renderAllowlist, type SkippedJob } from "./entries.ts"

/** A job named on the command line that the namespace does not have. */
export class NoSuchJob extends Data.TaggedError("NoSuchJob")<{ readonly message: string }> {}

/**
 * The allowlist for the named ImagePullJobs and ImageListPullJobs of a namespace (a name may be
 * either kind; a list job covers its images), or for all of them when none is named.
 */
export const runAllowlist = Effect.fnUntraced(function* (options: { readonly namespace: string; readonly jobs: ReadonlyArray<string> }) {
  const api = yield* KubeApi
  const pullJobs = (yield* api.list(resources.imagePullJob, { namespace: options.namespace })).items
  const listJobs = (yield* api.list(resources.imageListPullJob, { namespace: options.namespace })).items
  const wanted = new Set(options.jobs)
  const chosen = (objects: ReadonlyArray<KubeObject>) =>
    wanted.size === 0 ? objects : objects.filter((o) => wanted.has(o.metadata.name ?? ""))
  const picked = [
    ...chosen(pullJobs).map((o) => jobImages("ImagePullJob", o)),
    ...chosen(listJobs).map((o) => jobImages("ImageListPullJob", o))
  ]
  const found = new Set([...chosen(pullJobs), ...chosen(listJobs)].map((o) => o.metadata.name ?? ""))
  const missing = options.jobs.filter((name) => !found.has(name))
  if (missing.length > 0) {
    return yield* new NoSuchJob({
      message: `no ImagePullJob or ImageListPullJob named ${missing.join(", ")} in namespace ${options.namespace}`
    })
  }
  const jobs: Array<JobImages> = []
  const skipped: Array<SkippedJob> = []
  for (const job of picked) {
    if (Result.isSuccess(job)) jobs.push(job.success)
    else skipped.push(job.failure)
  }
  return renderAllowlist(options.namespace, allowlistEntries(jobs), skipped)
})
