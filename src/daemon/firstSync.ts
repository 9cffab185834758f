import type { ImageStatus, NodeImageSpec, SyncStatus } from "../api/nodeImage.ts"
import { isFinishedPhase, tagKey } from "./tagTask.ts"
import { rfc3339 } from "../api/time.ts"

/** A tag present in the spec when the daemon first saw its NodeImage. */
export interface InitialTag {
  readonly image: string
  readonly tag: string
}

export const initialTags = (spec: NodeImageSpec): ReadonlyArray<InitialTag> =>
  Object.entries(spec.images ?? {}).flatMap(([image, entry]) => entry.tags.map((t) => ({ image, tag: t.tag })))

const images = (n: number): string => `${n} image${n === 1 ? "" : "s"}`

/**
 * firstSyncStatus once every tag present at start has finished (its current version Succeeded or
 * Failed; a tag since removed from the spec no longer counts): Succeeded when none failed.
 * Undefined while some are still pending.
 */
export const firstSyncStatus = (
  initial: ReadonlyArray<InitialTag>,
  spec: NodeImageSpec,
  imageStatuses: Readonly<Record<string, ImageStatus>>,
  now: number
): SyncStatus | undefined => {
  const versions = new Map<string, number>()
  for (const [image, entry] of Object.entries(spec.images ?? {})) {
    for (const t of entry.tags) versions.set(tagKey(image, t.tag), t.version)
  }
  const failed: Array<string> = []
  let finished = 0
  for (const { image, tag } of initial) {
    const version = versions.get(tagKey(image, tag))
    if (version === undefined) continue
    const status = imageStatuses[image]?.tags.find((t) => t.tag === tag && (t.version ?? 0) === version)
    if (!isFinishedPhase(status?.phase)) return undefined
    finished++
    if (status?.phase === "Failed") failed.push(tag.includes(":") ? `${image}@${tag}` : `${image}:${tag}`)
  }
  const syncAt = rfc3339(now)
  if (failed.length > 0) {
    return { syncAt, status: "Failed", message: `${failed.length} of ${images(finished)} failed to pull: ${failed.join(", ")}` }
  }
  return { syncAt, status: "Succeeded", message: finished === 0 ? "no images to pull" : `${images(finished)} pulled` }
}
