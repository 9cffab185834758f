// The nodes held by preheat's startup taint, with their pulls: the status view's warming section.
import { millisOf } from "../api/time.ts"
import { carriesWarmTaint } from "../api/warmTaint.ts"
import type { NodeImage } from "../api/nodeImage.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import type { WarmingNode, WarmingPull } from "./model.ts"

/** Every tag the node has not pulled yet (or failed), from its NodeImage: what it is waiting on. */
const pullsOf = (nodeImage: NodeImage | undefined): ReadonlyArray<WarmingPull> => {
  const pulls: Array<WarmingPull> = []
  for (const [image, entry] of Object.entries(nodeImage?.spec.images ?? {})) {
    for (const tag of entry.tags) {
      const status = nodeImage?.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag.tag && (t.version ?? 0) === tag.version)
      if (status?.phase === "Succeeded") continue
      pulls.push({
        image: `${image}:${tag.tag}`,
        phase: status?.phase ?? "Waiting",
        ...(status?.progress === undefined ? {} : { progress: status.progress }),
        ...(status?.message === undefined ? {} : { message: status.message })
      })
    }
  }
  return pulls.sort((a, b) => a.image.localeCompare(b.image))
}

/**
 * The nodes that carry the startup taint `key`, by name, each with the pulls its NodeImage still
 * waits on and since when it is held (the taint's timeAdded, else the Node's creation).
 */
export const warmingNodes = (
  nodes: Iterable<KubeObject>,
  nodeImages: ReadonlyArray<NodeImage>,
  key: string
): ReadonlyArray<WarmingNode> => {
  const byName = new Map(nodeImages.map((n) => [n.metadata.name ?? "", n]))
  const warming: Array<WarmingNode> = []
  for (const node of nodes) {
    if (!carriesWarmTaint(node, key)) continue
    const name = node.metadata.name ?? ""
    const taints = (node["spec"] as { taints?: ReadonlyArray<{ key?: string; timeAdded?: string }> } | undefined)?.taints ?? []
    const since = millisOf(taints.find((t) => t.key === key)?.timeAdded) ?? millisOf(node.metadata.creationTimestamp)
    warming.push({ node: name, ...(since === undefined ? {} : { since }), pulls: pullsOf(byName.get(name)) })
  }
  return warming.sort((a, b) => a.node.localeCompare(b.node, "en", { numeric: true }))
}
