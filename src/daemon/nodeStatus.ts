import type { KubeletImageVerification } from "../api/kubeletImageVerification.ts"
import type { ImageStatus, ImageTagStatus, NodeImageSpec, SyncStatus } from "../api/nodeImage.ts"
import { statusCounters } from "../api/nodeImageCounters.ts"
import { firstSyncStatus, type InitialTag } from "./firstSync.ts"

/** What this daemon process knows of its tags: image -> tag -> the status its worker reported. */
export type LiveStatuses = ReadonlyMap<string, ReadonlyMap<string, ImageTagStatus>>

type StoredStatus = Readonly<Record<string, unknown>> & {
  readonly imageStatuses?: Readonly<Record<string, ImageStatus>>
  readonly firstSyncStatus?: SyncStatus
}

/**
 * The NodeImage status the daemon wants stored (SPEC §3, §4.9):
 * - per tag of the spec, in spec order: what a worker of this process reported for the spec's
 *   version, else whatever is stored (a tag finished before a restart, a mark by the controller);
 * - no entries for tags or images that left the spec;
 * - the counters from `statusCounters`;
 * - firstSyncStatus once, when every tag present at start has finished; then never changed;
 * - kubeletImageVerification as the daemon last read the kubelet's configuration (as stored while
 *   it has not read it, or does not read it);
 * - every other field as stored, so nothing the daemon does not own is wiped.
 */
export const desiredNodeStatus = (options: {
  readonly spec: NodeImageSpec
  readonly stored: StoredStatus | undefined
  readonly live: LiveStatuses
  /** Undefined until the daemon has seen its NodeImage. */
  readonly initial: ReadonlyArray<InitialTag> | undefined
  readonly now: number
  readonly verification?: KubeletImageVerification | undefined
}): Record<string, unknown> & { readonly imageStatuses: Readonly<Record<string, ImageStatus>> } => {
  const { spec, stored, live } = options
  const imageStatuses: Record<string, ImageStatus> = {}
  for (const [image, entry] of Object.entries(spec.images ?? {})) {
    const tags: Array<ImageTagStatus> = []
    for (const t of entry.tags) {
      const reported = live.get(image)?.get(t.tag)
      const status =
        reported !== undefined && (reported.version ?? 0) === t.version
          ? reported
          : stored?.imageStatuses?.[image]?.tags.find((s) => s.tag === t.tag)
      if (status !== undefined) tags.push(status)
    }
    if (tags.length > 0) imageStatuses[image] = { tags }
  }
  const firstSync =
    stored?.firstSyncStatus ??
    (options.initial === undefined ? undefined : firstSyncStatus(options.initial, spec, imageStatuses, options.now))
  return {
    ...stored,
    ...statusCounters(spec, imageStatuses),
    imageStatuses,
    ...(firstSync === undefined ? {} : { firstSyncStatus: firstSync }),
    ...(options.verification === undefined ? {} : { kubeletImageVerification: options.verification })
  }
}
