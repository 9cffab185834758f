// Which of a job's nodes get its tag, in what order and when: the one home of that policy, so that
// another ordering (seedFirst: a few nodes from the registry first, the rest from them once they
// have it, for peer-to-peer mirrors) is one more PullOrder, and tests can hand decide.ts their own. Pure.
import type { NodeImage } from "../../api/nodeImage.ts"
import { jitterSeconds } from "../jitter.ts"
import type { WaitingTargets } from "./decide.ts"
import { hasRoomFor } from "./nodeRoom.ts"
import type { RegistryRoom } from "./registryRoom.ts"

/** Where a job stands when it hands out its tag (decide.ts), all a policy may go by. */
export interface PullTurnInput {
  /** The image the job's task writes: a node whose NodeImage has no room for another one waits. */
  readonly image: string
  /** How many targets there are, how many pull now and how many succeeded (both 0 when the job starts over). */
  readonly desired: number
  readonly active: number
  readonly succeeded: number
  /** The job's parallelism, resolved against its targets: nodes pulling at once at most. */
  readonly parallelism: number
  /** Up to `limit` targets without the job's tag that `fits` accepts, in target order, and those it refused on the way. */
  readonly waiting: (limit: number, fits: (node: NodeImage) => boolean) => WaitingTargets
  /** The job's room on its registry under a limit (`--max-concurrent-pulls-per-registry` or throttling); absent: none. */
  readonly registry: RegistryRoom | undefined
  /** Failed targets due their tag's next version since the credentials changed (credentialRenewal.ts), in target order. */
  readonly retries: ReadonlyArray<NodeImage>
}

/** The nodes a job hands its tag to in one decision. */
export interface PullTurn {
  /** Targets without the tag, given it now, in order. */
  readonly start: ReadonlyArray<NodeImage>
  /** Failed targets given the tag's next version now. */
  readonly retry: ReadonlyArray<NodeImage>
  /** Nodes that would start now but for the room on the registry: the job waits for room (registryBudget.ts). */
  readonly heldBack: number
  /** Targets passed over for now because their NodeImage holds as many images as it may (nodeRoom.ts). */
  readonly fullNodes: ReadonlyArray<string>
}

export interface PullOrder {
  /**
   * The order a job's selected targets get its tag in. `named`: the job lists its nodes by name,
   * and `selected` is in the job's order; `seed`: the same for jobs that arrived together (cohort.ts).
   */
  readonly targets: (
    selected: ReadonlyArray<NodeImage>,
    job: { readonly seed: string; readonly named: boolean }
  ) => ReadonlyArray<NodeImage>
  /** Which targets get the tag now. */
  readonly next: (input: PullTurnInput) => PullTurn
}

const byName = (a: NodeImage, b: NodeImage) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1)

/**
 * Rotates the (name-sorted) nodes by an offset that follows from the seed: jobs that arrived
 * together (one seed, cohort.ts) take the same nodes at the same time, so that each node gets their
 * tasks in one write and reports them in one; jobs that did not begin on different nodes.
 */
const rotate = <A>(items: ReadonlyArray<A>, seed: string): ReadonlyArray<A> => {
  if (items.length < 2) return items
  const offset = jitterSeconds(seed, 0, items.length - 1)
  return [...items.slice(offset), ...items.slice(0, offset)]
}

/**
 * The order of SPEC §2 ImagePullJob 1: the named nodes in the job's order, else every target by
 * name from an offset of the job's cohort (cohort.ts); the first targets without the tag, as many as parallelism
 * leaves and the registry has room for (a node with no room for another image is passed over, and
 * the next one taken); then, within what is left of both, the failed targets whose credentials
 * changed, after the nodes still without the tag.
 */
export const targetOrder: PullOrder = {
  targets: (selected, { named, seed }) => (named ? selected : rotate([...selected].sort(byName), seed)),
  next: ({ active, image, parallelism, registry, retries, waiting }) => {
    const { ready, refused } = waiting(Math.max(0, parallelism - active), (node) => hasRoomFor(node, image))
    const started = registry === undefined ? ready.length : Math.min(ready.length, registry.room)
    const due = retries.slice(0, Math.max(0, parallelism - active - started))
    const retried = registry === undefined ? due.length : Math.min(due.length, Math.max(0, registry.room - started))
    return {
      start: ready.slice(0, started),
      retry: due.slice(0, retried),
      heldBack: ready.length - started + due.length - retried,
      fullNodes: refused
    }
  }
}

/**
 * Seed-first fan-out: while fewer than `seeds` targets succeeded, `order` starts nodes only up to
 * that many pulling or done, within parallelism (a failed seed frees its place for the next
 * target); once they succeeded, `order` alone. For peer-to-peer mirrors (Spegel and the like),
 * which serve only what some node holds already: started together, every node goes to the
 * registry; started after the seeds, they fetch from them.
 */
export const seedFirst = (seeds: number, order: PullOrder = targetOrder): PullOrder => ({
  targets: order.targets,
  next: (input) =>
    input.succeeded >= seeds
      ? order.next(input)
      : order.next({ ...input, parallelism: Math.min(input.parallelism, seeds - input.succeeded) })
})
