// Room on a node for one more image: a NodeImage holds at most maxNodeImages (256, upstream's
// rule, which admission enforces). A job whose image a full node does not have yet waits for room
// there instead of writing a spec the API server refuses.
import { maxNodeImages } from "../../api/nodeImage.ts"
import type { NodeImage } from "../../api/nodeImage.ts"

// A NodeImage view is never changed once decoded (a new version is a new object), so its count
// is taken once: a reconcile asks of many nodes, each holding up to 256 images.
const counted = new WeakMap<NodeImage, number>()

const imageCount = (node: NodeImage): number => {
  let count = counted.get(node)
  if (count === undefined) counted.set(node, (count = Object.keys(node.spec.images ?? {}).length))
  return count
}

/** Whether the node's NodeImage can take `image`: it has it already, or holds fewer than the most. */
export const hasRoomFor = (node: NodeImage, image: string): boolean =>
  node.spec.images?.[image] !== undefined || imageCount(node) < maxNodeImages

/** The job's status message's note on the nodes waiting for room. */
export const fullNote = (nodes: number): string =>
  `${nodes} ${nodes === 1 ? "node has" : "nodes have"} no room for another image (${maxNodeImages} at most)`
