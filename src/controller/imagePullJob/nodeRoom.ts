// Room on a node for one more image: a NodeImage holds at most maxNodeImages (256, upstream's
// rule, which admission enforces). A job whose image a full node does not have yet waits for room
// there instead of writing a spec the API server refuses.
import { maxNodeImages } from "../../api/nodeImage.ts"
import type { NodeImage } from "../../api/nodeImage.ts"

/** Whether the node holds fewer images than the most; counts no further than that. */
const belowMost = (images: Readonly<Record<string, unknown>>): boolean => {
  let count = 0
  for (const _ in images) if (++count >= maxNodeImages) return false
  return true
}

/** Whether the node's NodeImage can take `image`: it has it already, or holds fewer than the most. */
export const hasRoomFor = (node: NodeImage, image: string): boolean =>
  node.spec.images?.[image] !== undefined || belowMost(node.spec.images ?? {})

/** The job's status message's note on the nodes waiting for room. */
export const fullNote = (nodes: number): string =>
  `${nodes} ${nodes === 1 ? "node has" : "nodes have"} no room for another image (${maxNodeImages} at most)`
