import type { ImagePullJobSpec } from "../../api/imagePullJob.ts"
import { matchesLabelSelector } from "../../api/labelSelector.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { targetOrder } from "./pullOrder.ts"
import type { PullOrder } from "./pullOrder.ts"

/** The fields of a Pod that decide whether its node is a podSelector target. */
export interface PodPlacement {
  readonly namespace: string
  readonly nodeName: string | undefined
  readonly labels: Readonly<Record<string, string>>
  readonly phase: string | undefined
  readonly deleting: boolean
}

/** What of a pod a pod selector's targets depend on: the controller's pods store holds it per version. */
export const podPlacement = (pod: KubeObject): PodPlacement => ({
  namespace: pod.metadata.namespace ?? "",
  nodeName: (pod["spec"] as { nodeName?: string } | undefined)?.nodeName,
  labels: pod.metadata.labels ?? {},
  phase: (pod["status"] as { phase?: string } | undefined)?.phase,
  deleting: pod.metadata.deletionTimestamp !== undefined
})

const isActive = (pod: PodPlacement): boolean =>
  pod.nodeName !== undefined && pod.nodeName !== "" && !pod.deleting && pod.phase !== "Succeeded" && pod.phase !== "Failed"

const hasLabelTerms = (selector: NonNullable<ImagePullJobSpec["selector"]>): boolean =>
  Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0

/**
 * Whether a job's node selector picks a node by its name and labels: the listed names, else the
 * label terms, else (absent or empty, SPEC §4.5) every node. Pod selection is decided elsewhere.
 */
export const nodeSelected = (selector: ImagePullJobSpec["selector"], name: string, labels: Readonly<Record<string, string>>): boolean => {
  const names = selector?.names ?? []
  if (names.length > 0) return names.includes(name)
  return selector === undefined || !hasLabelTerms(selector) || matchesLabelSelector(selector, labels)
}

/**
 * The NodeImages a job pulls on, in the order they get tasks (SPEC §2 ImagePullJob 1, the pull
 * order's): the given names, in their order; or the nodes matching the labels; or the nodes running
 * matching active pods of the job's namespace; or, with no selector or an empty one (SPEC §4.5),
 * every node. NodeImages being deleted are not targets.
 */
export const selectTargets = (
  spec: Pick<ImagePullJobSpec, "selector" | "podSelector">,
  job: { readonly namespace: string; readonly seed: string },
  nodes: Iterable<NodeImage>,
  pods: () => Iterable<PodPlacement>,
  order: PullOrder = targetOrder
): ReadonlyArray<NodeImage> => {
  const live = [...nodes].filter((n) => n.metadata.deletionTimestamp === undefined)
  const names = spec.selector?.names ?? []
  if (names.length > 0) {
    const byName = new Map(live.map((n) => [n.metadata.name ?? "", n]))
    const named = names.flatMap((name) => {
      const node = byName.get(name)
      return node === undefined ? [] : [node]
    })
    return order.targets(named, { seed: job.seed, named: true })
  }
  let chosen = live
  if (spec.selector !== undefined && hasLabelTerms(spec.selector)) {
    const selector = spec.selector
    chosen = live.filter((n) => nodeSelected(selector, n.metadata.name ?? "", n.metadata.labels ?? {}))
  } else if (spec.podSelector !== undefined) {
    const selector = spec.podSelector
    const podNodes = new Set<string>()
    for (const pod of pods()) {
      if (pod.namespace === job.namespace && isActive(pod) && matchesLabelSelector(selector, pod.labels)) {
        podNodes.add(pod.nodeName!)
      }
    }
    chosen = live.filter((n) => podNodes.has(n.metadata.name ?? ""))
  }
  return order.targets(chosen, { seed: job.seed, named: false })
}
