// What wakes a node's warming reconcile (keyed by node name): its Node, its NodeImage while the
// node is held, and a job appearing, going or changing what it must warm, for the held nodes.
import { Result } from "effect"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { changed } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { ControllerStores, Decoded } from "../stores.ts"
import type { Watch } from "../wake.ts"
import { warmNodesAnnotation } from "./gates.ts"
import { carriesWarmTaint } from "../../api/warmTaint.ts"

const nameOf = (change: Change<unknown>): string => changed(change).raw.metadata.name ?? ""

/** A NodeImage's tags or their phases changed on a held node (the only nodes it matters for). */
const heldNodeImage = (nodes: ControllerStores["nodes"], key: string) => (change: Change<NodeImage>) => {
  const name = nameOf(change)
  const node = nodes.get(name)
  return node !== undefined && carriesWarmTaint(node, key) ? [name] : []
}

/** What of a job decides whether it must warm a node: being there, its spec, its annotation, its end, its validity. */
const gateChanged = (change: Change<Decoded<ImagePullJob>>): boolean => {
  if (change.type !== "modified") return true
  const { current, old } = change
  if (current.raw.metadata.generation !== old.raw.metadata.generation) return true
  if (current.raw.metadata.annotations?.[warmNodesAnnotation] !== old.raw.metadata.annotations?.[warmNodesAnnotation]) return true
  if (current.raw.metadata.deletionTimestamp !== old.raw.metadata.deletionTimestamp) return true
  const finished = (view: Decoded<ImagePullJob>) => Result.isSuccess(view) && view.success.status?.completionTime !== undefined
  const refused = (view: Decoded<ImagePullJob>) =>
    Result.isSuccess(view) && view.success.status?.conditions?.some((c) => c.type === "Valid" && c.status === "False") === true
  return finished(current.view) !== finished(old.view) || refused(current.view) !== refused(old.view)
}

/** What the node warming reconciler watches. */
export const nodeWarmingWatches = (queue: WorkQueue, nodes: ControllerStores["nodes"], key: string) => ({
  nodes: [{ queue, keys: (change: Change) => [nameOf(change)] }] satisfies ReadonlyArray<Watch<KubeObject>>,
  nodeImages: [{ queue, keys: heldNodeImage(nodes, key) }] satisfies ReadonlyArray<Watch<NodeImage>>,
  jobs: [
    { queue, keys: (change: Change<Decoded<ImagePullJob>>) => (gateChanged(change) ? [...nodes.indexes.taints.keys(key)] : []) }
  ] satisfies ReadonlyArray<Watch<Decoded<ImagePullJob>>>
})
