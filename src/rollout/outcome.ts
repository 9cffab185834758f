// Whether the rollout's jobs are done, and if not everywhere, where and why: decided on the
// status view's model, the same the user sees.
import type { JobView, StatusModel } from "../statusView/model.ts"

export interface NodeFailure {
  readonly node: string
  readonly message: string
}

export interface JobFailure {
  readonly job: string
  readonly image: string
  readonly reason: string
  readonly nodes: ReadonlyArray<NodeFailure>
}

export type Outcome =
  | { readonly _tag: "Pulling" }
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "Failed"; readonly failures: ReadonlyArray<JobFailure> }

export interface RolloutJob {
  readonly name: string
  readonly image: string
}

/**
 * A completed job's failed nodes: those whose pull failed, and those still pulling, which the
 * controller counted as failed when the job's deadline passed (the daemon's pull may go on).
 */
const failedNodes = (view: JobView): ReadonlyArray<NodeFailure> =>
  view.nodes.map((n) => ({
    node: n.node,
    message:
      n.phase === "Failed" ? (n.message ?? "failed") : `still pulling when the job ended${view.message === "" ? "" : ` (${view.message})`}`
  }))

const failureOf = (job: RolloutJob, view: JobView | undefined): JobFailure | undefined => {
  if (view === undefined) return { job: job.name, image: job.image, reason: "was deleted before it completed", nodes: [] }
  if (view.phase === "invalid") return { job: job.name, image: job.image, reason: `is invalid: ${view.message}`, nodes: [] }
  if (view.failed === 0) return undefined
  return { job: job.name, image: job.image, reason: `failed on ${view.failed} of ${view.desired} nodes`, nodes: failedNodes(view) }
}

/** Done once every job completed (or is gone, or invalid); succeeded only if no node failed. */
export const judge = (model: StatusModel, jobs: ReadonlyArray<RolloutJob>): Outcome => {
  const views = new Map(model.jobs.filter((j) => j.kind === "ImagePullJob").map((j) => [j.name, j]))
  const done = jobs.every((job) => {
    const view = views.get(job.name)
    return view === undefined || view.phase === "completed" || view.phase === "invalid"
  })
  if (!done) return { _tag: "Pulling" }
  const failures = jobs.flatMap((job) => {
    const failure = failureOf(job, views.get(job.name))
    return failure === undefined ? [] : [failure]
  })
  return failures.length === 0 ? { _tag: "Succeeded" } : { _tag: "Failed", failures }
}

/**
 * Where the jobs stand when --timeout ends the wait: failed nodes, and those still pulling, of
 * every job not done. Pending nodes are not listed (the view does not know them by name).
 */
export const unfinished = (model: StatusModel, jobs: ReadonlyArray<RolloutJob>): ReadonlyArray<JobFailure> => {
  const views = new Map(model.jobs.filter((j) => j.kind === "ImagePullJob").map((j) => [j.name, j]))
  return jobs.flatMap((job) => {
    const view = views.get(job.name)
    if (view === undefined || view.phase === "invalid") return [failureOf(job, view)!]
    if (view.phase === "completed" && view.failed === 0) return []
    const done = view.succeeded + view.failed
    return [
      {
        job: job.name,
        image: job.image,
        reason: view.phase === "completed" ? `failed on ${view.failed} of ${view.desired} nodes` : `${done} of ${view.desired} nodes done`,
        nodes: view.nodes.map((n) => ({ node: n.node, message: n.phase === "Pulling" ? "still pulling" : (n.message ?? "failed") }))
      }
    ]
  })
}

/** The lines after `error: ...`: each job's failure and its nodes. */
export const failureLines = (failures: ReadonlyArray<JobFailure>): ReadonlyArray<string> =>
  failures.flatMap((f) => [`  ImagePullJob ${f.job} (${f.image}) ${f.reason}`, ...f.nodes.map((n) => `    ${n.node}: ${n.message}`)])
