import { Result } from "effect"
import { parseImageReference } from "../../api/imageReference.ts"
import type { NodeImage } from "../../api/nodeImage.ts"

/**
 * How many more of a job's nodes may start pulling now under `--max-concurrent-pulls-per-registry`
 * (issue 15, part 4): the job's second budget beside its parallelism, shared by every job on the
 * same registry host.
 */
export interface RegistryRoom {
  /** The registry host, as the image reference normalises it (`nginx` -> `docker.io`). */
  readonly registry: string
  readonly limit: number
  /** Nodes the job may hand its tag to now; 0 when the registry is at its limit. */
  readonly room: number
}

/**
 * The registry host of an image reference, port kept (`localhost:5000/app` -> `localhost:5000`).
 * Validation parsed the image before any job is acted on; an unparsable one is its own registry.
 */
export const registryOf = (image: string): string => {
  const reference = parseImageReference(image)
  return Result.isSuccess(reference) ? reference.success.domain : image
}

export interface RoomInput {
  readonly limit: number
  /** Nodes pulling from the registry for other jobs (handed a tag, not yet final). */
  readonly othersInFlight: number
  /** Nodes held back for jobs that waited longer on this registry: theirs before this job's. */
  readonly heldAhead: number
  /** This job's own nodes pulling now. */
  readonly active: number
}

/** The room a job has on its registry: the limit less everything pulling, less what older waiters are owed. */
export const roomOnRegistry = ({ active, heldAhead, limit, othersInFlight }: RoomInput): number =>
  Math.max(0, limit - othersInFlight - active - heldAhead)

/** The status message's note on held-back nodes, so `kubectl get ipj` and `preheat status` show why. */
export const heldBackNote = (held: number, registry: RegistryRoom): string =>
  `${held} ${held === 1 ? "node" : "nodes"} waiting for registry ${registry.registry} (limit ${registry.limit})`

/** The Event's words when nodes reporting throttling lowered a registry's limit. */
export const loweredMessage = ({
  from,
  registry,
  to
}: {
  readonly registry: string
  readonly from: number | undefined
  readonly to: number
}) =>
  `registry ${registry} throttles pulls (HTTP 429): concurrent pulls from it lowered ${from === undefined ? "" : `from ${from} `}to ${to}`

/**
 * The pulls under way per job, read from NodeImages: every tag a job owns whose status for its
 * version is not final yet (the job's `active`, as nodeState judges it). A controller that starts
 * leading opens its books with these, so jobs the previous leader started count from the first
 * decision rather than from their own next reconcile.
 */
export const pullsUnderWay = (
  nodeImages: Iterable<NodeImage>,
  jobOf: (uid: string) => string | undefined
): ReadonlyMap<string, { readonly registry: string; readonly inFlight: number }> => {
  const byJob = new Map<string, { registry: string; inFlight: number }>()
  for (const node of nodeImages) {
    for (const [image, entry] of Object.entries(node.spec.images ?? {})) {
      for (const tag of entry.tags) {
        const reported = node.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag.tag && (t.version ?? 0) === tag.version)
        if (reported?.phase === "Succeeded" || reported?.phase === "Failed") continue
        for (const owner of tag.ownerReferences ?? []) {
          const job = owner.uid === undefined ? undefined : jobOf(owner.uid)
          if (job === undefined) continue
          const counted = byJob.get(job)
          if (counted === undefined) byJob.set(job, { registry: registryOf(image), inFlight: 1 })
          else counted.inFlight++
        }
      }
    }
  }
  return byJob
}
