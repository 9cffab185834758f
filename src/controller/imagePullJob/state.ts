// What the ImagePullJob reconciler remembers between reconciles, and the one place where a change
// of a job, a NodeImage or a pod updates it.
import { createHash } from "node:crypto"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { NodeImage } from "../../api/nodeImage.ts"
import { objectKey } from "../../kube/objectKey.ts"
import { changed } from "../../kube/store.ts"
import type { Change } from "../../kube/store.ts"
import { RegistryBudget } from "./registryBudget.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { Decoded, JobStore } from "../stores.ts"
import type { Bookkeeping } from "../wake.ts"
import type { Credentials, PendingRetries } from "./credentialRenewal.ts"
import type { JobProgress } from "./progress.ts"
import type { PodPlacement } from "./targets.ts"
import { nodeSetChanged, ownersWhoseTagsChanged, podPlacementChanged, specMoved } from "./watches.ts"

export interface ImagePullJobBooks {
  /** Each job's targets, what they were computed from, and where each stands for the job's task. */
  readonly targets: ReadonlyMap<string, JobProgress>
  /** The spec each job's tags were last brought up to date with (a fingerprint). */
  readonly propagated: ReadonlyMap<string, string>
  /** When each job's status was last written (ms), to space out counter-only updates. */
  readonly statusWrittenAt: ReadonlyMap<string, number>
  /** The credentials each job's nodes pulled with as its last reconcile saw them (credentialRenewal.ts). */
  readonly credentials: ReadonlyMap<string, Credentials>
  /** Each job's failed nodes still to be given their tag again since its credentials changed. */
  readonly retries: ReadonlyMap<string, PendingRetries>
  /** Nodes pulling and held back per registry, across jobs (`--max-concurrent-pulls-per-registry`). */
  readonly registries: RegistryBudget
  /** Bumped when the node set or node labels change (NodeImages) and when pods move. */
  readonly placement: { readonly nodes: number; readonly pods: number }
  readonly setTargets: (key: string, progress: JobProgress) => void
  readonly setPropagated: (key: string, fingerprint: string) => void
  readonly setStatusWrittenAt: (key: string, millis: number) => void
  readonly setCredentials: (key: string, credentials: Credentials, retries: PendingRetries) => void
  /** A digest of a copy's data, computed once per version the store holds (the data is never kept). */
  readonly digestOf: (data: object) => string
  /** The job passed the node over for want of room (nodeRoom.ts): it is woken when a newer spec of it arrives. */
  readonly awaitNewer: (node: string, key: string) => void
  /**
   * A job changed: one that is gone leaves nothing behind. Returns the jobs to wake: those
   * waiting for the registry room it held.
   */
  readonly jobChanged: (change: Change<Decoded<ImagePullJob>>) => ReadonlyArray<string>
  /**
   * A NodeImage changed: targets whose tags changed are read again, a change of the node set
   * invalidates every job's targets, and jobs waiting for room on it stop waiting. Returns those jobs.
   */
  readonly nodeImageChanged: (change: Change<NodeImage>, jobs: JobStore) => ReadonlyArray<string>
  /** A pod that moved invalidates the targets of jobs that select by pod. */
  readonly podChanged: (change: Change<PodPlacement>) => void
}

// The same data whatever order a server gave its keys in (Go sorts a map's keys; others need not).
const sortedEntries = (data: object) => Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** The ImagePullJob reconciler's books, one set per controller (makeController makes them). */
export const makeImagePullJobBooks = (maxConcurrentPullsPerRegistry: number | undefined): ImagePullJobBooks => {
  const targets = new Map<string, JobProgress>()
  const propagated = new Map<string, string>()
  const statusWrittenAt = new Map<string, number>()
  const credentials = new Map<string, Credentials>()
  const retries = new Map<string, PendingRetries>()
  const digests = new WeakMap<object, string>()
  const awaitingNewer = new Map<string, Set<string>>()
  const registries = new RegistryBudget(maxConcurrentPullsPerRegistry)
  const placement = { nodes: 0, pods: 0 }
  return {
    targets,
    propagated,
    statusWrittenAt,
    credentials,
    retries,
    registries,
    placement,
    setTargets: (key, progress) => void targets.set(key, progress),
    setPropagated: (key, fingerprint) => void propagated.set(key, fingerprint),
    setStatusWrittenAt: (key, millis) => void statusWrittenAt.set(key, millis),
    setCredentials: (key, seen, due) => {
      credentials.set(key, seen)
      if (due.size === 0) retries.delete(key)
      else retries.set(key, due)
    },
    digestOf: (data) => {
      let digest = digests.get(data)
      if (digest === undefined)
        digests.set(
          data,
          (digest = createHash("sha256")
            .update(JSON.stringify(sortedEntries(data)))
            .digest("base64"))
        )
      return digest
    },
    awaitNewer: (node, key) => {
      let jobs = awaitingNewer.get(node)
      if (jobs === undefined) awaitingNewer.set(node, (jobs = new Set()))
      jobs.add(key)
    },
    jobChanged: (change) => {
      if (change.type !== "deleted") return []
      const key = objectKey(change.old.raw)
      targets.delete(key)
      propagated.delete(key)
      statusWrittenAt.delete(key)
      credentials.delete(key)
      retries.delete(key)
      return registries.forget(key)
    },
    nodeImageChanged: (change, jobs) => {
      const name = changed(change).raw.metadata.name ?? ""
      // Room is made by a spec change only: a status report cannot end the wait.
      const waiting = specMoved(change) ? [...(awaitingNewer.get(name) ?? [])] : []
      if (waiting.length > 0) awaitingNewer.delete(name)
      for (const key of ownersWhoseTagsChanged(change, jobs)) targets.get(key)?.touched(name)
      if (nodeSetChanged(change)) placement.nodes++
      return waiting
    },
    podChanged: (change) => {
      if (podPlacementChanged(change)) placement.pods++
    }
  }
}

/**
 * Where the books hear of changes (controller.ts hands these to the stores' handlers beside the
 * pure mappings of watches.ts), and which of the reconciler's keys an update frees.
 */
export const imagePullJobBookkeeping = (queue: WorkQueue, books: ImagePullJobBooks, jobs: JobStore, nodeReportBatchMs: number) => ({
  jobs: [{ queue, note: books.jobChanged }] satisfies ReadonlyArray<Bookkeeping<Decoded<ImagePullJob>>>,
  // Woken with the owners of changed tags (watches.ts jobsForNodeImage), after the same delay.
  nodeImages: [{ queue, note: (change) => books.nodeImageChanged(change, jobs), delayMs: nodeReportBatchMs }] satisfies ReadonlyArray<
    Bookkeeping<NodeImage>
  >,
  pods: [
    {
      queue,
      note: (change) => {
        books.podChanged(change)
        return []
      }
    }
  ] satisfies ReadonlyArray<Bookkeeping<PodPlacement>>
})
