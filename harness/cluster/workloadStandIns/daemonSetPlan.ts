// What a DaemonSet controller does next (k8s.io/kubernetes pkg/controller/daemon): one pod on
// every node that matches the template's nodeSelector (a new one only on a Ready node, as the
// not-ready taint keeps new daemon pods off; a running one stays), none elsewhere, and a
// RollingUpdate that removes old pods while at most maxUnavailable nodes lack an available one.

export interface DaemonNode {
  readonly name: string
  readonly ready: boolean
  readonly matches: boolean
}

export interface DaemonPod {
  readonly name: string
  readonly nodeName: string
  readonly updated: boolean
  readonly ready: boolean
  readonly terminating: boolean
  readonly created: string
}

export interface DaemonSetInput {
  readonly nodes: ReadonlyArray<DaemonNode>
  readonly pods: ReadonlyArray<DaemonPod>
  /** Already scaled against the number of nodes that should run the pod; undefined for OnDelete. */
  readonly maxUnavailable: number | undefined
}

export interface DaemonSetPlan {
  readonly create: ReadonlyArray<string>
  readonly delete: ReadonlyArray<string>
  /** Nodes that should run the pod (status.desiredNumberScheduled). */
  readonly desired: ReadonlyArray<string>
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name, "en", { numeric: true })

export const planDaemonSet = (input: DaemonSetInput): DaemonSetPlan => {
  const podsByNode = new Map<string, Array<DaemonPod>>()
  for (const pod of input.pods) podsByNode.set(pod.nodeName, [...(podsByNode.get(pod.nodeName) ?? []), pod])
  const create: Array<string> = []
  const remove: Array<string> = []
  const desired: Array<string> = []
  const nodes = new Map(input.nodes.map((n) => [n.name, n]))
  // Pods on nodes that are gone or no longer match.
  for (const [nodeName, pods] of podsByNode) {
    if (nodes.get(nodeName)?.matches !== true) remove.push(...pods.filter((p) => !p.terminating).map((p) => p.name))
  }
  const serving: Array<DaemonPod> = []
  let unavailable = 0
  for (const node of [...input.nodes].sort(byName)) {
    if (!node.matches) continue
    const pods = podsByNode.get(node.name) ?? []
    const live = pods.filter((p) => !p.terminating).sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : byName(a, b)))
    if (live.length === 0 && !node.ready) continue
    desired.push(node.name)
    if (live.length === 0) {
      // Wait for a terminating pod to go before starting its successor.
      if (pods.length === 0) create.push(node.name)
      unavailable++
      continue
    }
    // One pod per node: the oldest stays.
    remove.push(...live.slice(1).map((p) => p.name))
    serving.push(live[0]!)
    if (!live[0]!.ready) unavailable++
  }
  if (input.maxUnavailable !== undefined) {
    const old = serving.filter((p) => !p.updated)
    // Old pods that are not available anyway go first; they cost nothing.
    for (const pod of old.filter((p) => !p.ready)) remove.push(pod.name)
    for (const pod of old.filter((p) => p.ready)) {
      if (unavailable >= input.maxUnavailable) break
      remove.push(pod.name)
      unavailable++
    }
  }
  return { create, delete: remove, desired }
}
