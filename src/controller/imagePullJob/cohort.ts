// Which jobs arrived together, for the order their nodes get tasks in (pullOrder.ts). Pure.
import type { ObjectMeta } from "../../api/meta.ts"

/**
 * The seed of a job's target order: jobs that arrived together share it, so that they want the
 * same nodes at the same time and their tasks go out in shared writes (taskWriter.ts), each node
 * learning all of them at once and reporting their outcomes together: the children of one owner
 * that controls them (an ImageListPullJob, a workload's pre-pull) its uid, any other job the minute
 * it was created in (a folder of jobs applied at once). Jobs that did not arrive together start on
 * different nodes, as each job's own uid made all of them do before (issue 40).
 */
export const cohortOf = (job: { readonly metadata: ObjectMeta }): string => {
  const { creationTimestamp, ownerReferences, uid } = job.metadata
  const owner = ownerReferences?.find((ref) => ref.controller === true)?.uid
  if (owner !== undefined) return `owner ${owner}`
  // RFC 3339 in UTC, as the API server writes it: "2026-12-02T10:00:59Z" -> "2026-12-02T10:00".
  return creationTimestamp === undefined ? `uid ${uid ?? ""}` : `created ${creationTimestamp.slice(0, 16)}`
}
