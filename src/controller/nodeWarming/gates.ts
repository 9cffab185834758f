// Which jobs must warm a node before preheat lifts its startup taint, and where each stands on it.
import { Result } from "effect"
import { parseImageReference, toNodeImageTask } from "../../api/imageReference.ts"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import { ownTagStatus } from "../../api/ownTag.ts"
import { resolveParallelism } from "../../api/parallelism.ts"
import { keyOf } from "../../kube/objectKey.ts"
import { nodeSelected } from "../imagePullJob/targets.ts"

/** The annotation that makes a job (of any completion policy) one that must warm the nodes it selects. */
export const warmNodesAnnotation = "preheat.kruise.io/warm-nodes"

/**
 * Whether `job` must warm the node `name` with `labels`: it selects the node by name, labels or as
 * every node (a podSelector picks nodes by their pods, and a warming node runs none), and it is a
 * Never job (which covers new nodes for as long as it exists) or annotated `warm-nodes: "true"`
 * and still running (a finished Always job gives no new node a task). A job being deleted, paused
 * or invalid warms nothing.
 */
export const mustWarm = (job: ImagePullJob, name: string, labels: Readonly<Record<string, string>>): boolean => {
  if (job.metadata.deletionTimestamp !== undefined) return false
  const never = job.spec.completionPolicy.type === "Never"
  const annotated = job.metadata.annotations?.[warmNodesAnnotation] === "true"
  if (!never && !(annotated && job.status?.completionTime === undefined)) return false
  // A paused job, or one the controller refuses (Valid=False), gives the node no task: it would
  // only hold the node until the timeout.
  if (resolveParallelism(job.spec.parallelism, 1) === 0) return false
  if (job.status?.conditions?.some((c) => c.type === "Valid" && c.status === "False") === true) return false
  const { podSelector, selector } = job.spec
  const byNode =
    (selector?.names ?? []).length > 0 ||
    Object.keys(selector?.matchLabels ?? {}).length > 0 ||
    (selector?.matchExpressions ?? []).length > 0
  if (podSelector !== undefined && !byNode) return false
  return nodeSelected(selector, name, labels)
}

/** Where one job that must warm a node stands on it. */
export type WarmState =
  | { readonly phase: "pending"; readonly why: string }
  | { readonly phase: "succeeded" }
  | { readonly phase: "failed"; readonly why: string }

/** A job that must warm a node, with its image and its state there. */
export interface Gate {
  /** The job's store key (namespace/name). */
  readonly job: string
  readonly image: string
  readonly state: WarmState
}

/**
 * Where the job stands on the node, judged by its own tag there (uid and version), as the job's
 * reconcile judges it (ownTag.ts). No NodeImage yet, or no tag of the job yet: pending.
 */
export const warmState = (job: ImagePullJob, nodeImage: NodeImage | undefined): WarmState => {
  const parsed = parseImageReference(job.spec.image)
  if (Result.isFailure(parsed)) return { phase: "pending", why: "image reference does not parse" }
  if (nodeImage === undefined) return { phase: "pending", why: "node has no NodeImage yet" }
  const { name, tag } = toNodeImageTask(parsed.success)
  const status = ownTagStatus(nodeImage, name, tag, job.metadata.uid ?? "")
  if (status === null) return { phase: "pending", why: "not yet given to the node" }
  switch (status?.phase) {
    case "Succeeded":
      return { phase: "succeeded" }
    case "Failed":
      return { phase: "failed", why: status.message ?? "pull failed" }
    case "Pulling":
      return { phase: "pending", why: `pulling${status.progress === undefined ? "" : ` ${status.progress}%`}` }
    default:
      return { phase: "pending", why: "waiting to pull" }
  }
}

/** The gates of one node: every job that must warm it, with its state there, in job key order. */
export const gatesOf = (
  node: { readonly name: string; readonly labels: Readonly<Record<string, string>> },
  jobs: Iterable<ImagePullJob>,
  nodeImage: NodeImage | undefined
): ReadonlyArray<Gate> => {
  const gates: Array<Gate> = []
  for (const job of jobs) {
    if (!mustWarm(job, node.name, node.labels)) continue
    gates.push({ job: keyOf(job.metadata.namespace, job.metadata.name ?? ""), image: job.spec.image, state: warmState(job, nodeImage) })
  }
  return gates.sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : 0))
}
