// What the node warming reconciler remembers: when it first saw each node's taint, and the
// warmings that ended since the metrics last read them.
import type { WarmOutcome } from "../../ops/metrics.ts"

export interface WarmingEnded {
  readonly outcome: WarmOutcome
  /** From the taint's first sighting to its removal. */
  readonly seconds: number
}

export interface NodeWarmingBooks {
  /** When the taint was first seen on the node, if it is held. */
  readonly firstSeen: (node: string) => number | undefined
  /** The node is held, since `at`. */
  readonly holding: (node: string, at: number) => void
  /** The node is no longer held (released by preheat: `ended`; else the taint went or the node did). */
  readonly forget: (node: string, ended?: WarmingEnded) => void
  /** How many nodes are held now. */
  readonly warming: () => number
  /** The warmings that ended since the last call (for the histogram), oldest first. */
  readonly drainEnded: () => ReadonlyArray<WarmingEnded>
}

/** Ended warmings kept for a reader that never comes (a controller without metrics): the oldest go first. */
const endedKept = 1024

/** The node warming reconciler's books, one set per controller. */
export const makeNodeWarmingBooks = (): NodeWarmingBooks => {
  const seen = new Map<string, number>()
  let ended: Array<WarmingEnded> = []
  return {
    firstSeen: (node) => seen.get(node),
    holding: (node, at) => {
      if (!seen.has(node)) seen.set(node, at)
    },
    forget: (node, end) => {
      seen.delete(node)
      if (end === undefined) return
      ended.push(end)
      if (ended.length > endedKept) ended = ended.slice(-endedKept)
    },
    warming: () => seen.size,
    drainEnded: () => {
      const drained = ended
      ended = []
      return drained
    }
  }
}
