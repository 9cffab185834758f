import type { ObjectReference } from "../../api/meta.ts"
import type { NodeImageSpec, NodeImageStatus } from "../../api/nodeImage.ts"
import type { ImageInfo } from "../../cri/CriRuntime.ts"
import type { ImageRecord } from "../../cri/ImageLabels.ts"
import { findImage } from "../imagePresence.ts"
import { storedTagStatus, tagTasks } from "../tagTask.ts"

/** containerd's CRI plugin reports an image record with this label as `pinned`; the kubelet's image GC skips it. */
export const pinnedLabel = "io.cri-containerd.pinned"
const pinnedValue = "pinned"
/**
 * containerd's labels do not say who pinned an image. preheat writes this one next to the pin and
 * only ever removes pins that carry it: a pin set by someone else (the sandbox image, an operator)
 * is never touched.
 */
export const preheatPinLabel = "apps.kruise.io/preheat-pinned"
const preheatPinValue = "true"

/** How long a pin outlives a Never tag dropped by its TTL, waiting for the job's daily re-pull to write it again. */
export const holdLimitMillis = 24 * 60 * 60 * 1000
/** The controller's clock and ours may differ: a tag gone this close to its expiry went by TTL. */
const ttlSlackMillis = 5 * 60 * 1000

/** An owner job's completion policy as last read; `gone` when it no longer exists (or is another object by that name). */
export type OwnerPolicy = "Always" | "Never" | "gone"

/** One tag of the NodeImage as pinning sees it. */
export interface PinTag {
  /** What the runtime was asked for: `name:tag` or `name@sha256:...`. */
  readonly reference: string
  readonly owners: ReadonlyArray<ObjectReference>
  /** When the controller drops the tag (its current version's completion + TTL), if it finished. */
  readonly expiresAt?: number
}

/** A pin kept for a Never tag the controller dropped by TTL: its job pulls it again and writes the tag anew. */
export interface HeldPin {
  readonly reference: string
  /** The Never jobs that wanted it: the hold lasts while one of them still exists and is Never. */
  readonly owners: ReadonlyArray<ObjectReference>
  readonly until: number
}

const parseTime = (time: string | undefined): number | undefined => {
  if (time === undefined) return undefined
  const millis = Date.parse(time)
  return Number.isNaN(millis) ? undefined : millis
}

/** The tags of a NodeImage spec with what pinning needs (the status gives each finished version's expiry). */
export const pinTags = (spec: NodeImageSpec, imageStatuses: NodeImageStatus["imageStatuses"]): ReadonlyArray<PinTag> =>
  tagTasks(spec).map((task) => {
    const status = storedTagStatus(imageStatuses, task.image, task.tag)
    const ttl = spec.images?.[task.image]?.tags.find((t) => t.tag === task.tag)?.pullPolicy?.ttlSecondsAfterFinished
    const completed = status !== undefined && (status.version ?? 0) === task.version ? parseTime(status.completionTime) : undefined
    return {
      reference: task.reference,
      owners: task.owners,
      ...(completed === undefined || ttl === undefined ? {} : { expiresAt: completed + ttl * 1000 })
    }
  })

/** The owners whose policy, as read, is Never. Only jobs (owner references with a uid) have a policy. */
const neverOwners = (owners: ReadonlyArray<ObjectReference>, policies: ReadonlyMap<string, OwnerPolicy>) =>
  owners.filter((owner) => owner.uid !== undefined && policies.get(owner.uid) === "Never")

/** The owners whose policy pinning needs to know: those of the tags now, the holds, and tags just gone. */
export const ownersToRead = (
  previous: ReadonlyArray<PinTag>,
  current: ReadonlyArray<PinTag>,
  held: ReadonlyArray<HeldPin>
): ReadonlyArray<ObjectReference> => {
  const byUid = new Map<string, ObjectReference>()
  for (const owner of [...current, ...previous, ...held].flatMap((t) => t.owners)) {
    if (owner.uid !== undefined && !byUid.has(owner.uid)) byUid.set(owner.uid, owner)
  }
  return [...byUid.values()]
}

export interface PinDemand {
  /** References whose image should carry the pin. */
  readonly wanted: ReadonlyArray<string>
  readonly held: ReadonlyArray<HeldPin>
}

/**
 * Which references should be pinned (pure). A tag wants its image pinned while one of its owner
 * jobs has completion policy Never; hand-written tags (no owner) have no policy and are not pinned.
 * A Never tag that left the spec at its TTL (the controller drops it every day, and the job writes
 * it again for the daily re-pull, maybe only later under its parallelism) keeps its pin while one
 * of its Never jobs exists, for at most `holdLimitMillis`; a tag removed before its TTL (job
 * deleted, node no longer selected, edited by hand) unpins at once.
 */
export const pinDemand = (input: {
  readonly previous: ReadonlyArray<PinTag>
  readonly current: ReadonlyArray<PinTag>
  readonly held: ReadonlyArray<HeldPin>
  readonly policies: ReadonlyMap<string, OwnerPolicy>
  readonly now: number
}): PinDemand => {
  const { previous, current, policies, now } = input
  const present = new Set(current.map((t) => t.reference))
  const wanted = new Set(current.filter((t) => neverOwners(t.owners, policies).length > 0).map((t) => t.reference))
  const held: Array<HeldPin> = []
  for (const hold of input.held) {
    const owners = neverOwners(hold.owners, policies)
    if (!present.has(hold.reference) && hold.until > now && owners.length > 0) held.push({ ...hold, owners })
  }
  for (const tag of previous) {
    if (present.has(tag.reference) || held.some((h) => h.reference === tag.reference)) continue
    const owners = neverOwners(tag.owners, policies)
    const droppedByTtl = tag.expiresAt !== undefined && tag.expiresAt <= now + ttlSlackMillis
    if (droppedByTtl && owners.length > 0) held.push({ reference: tag.reference, owners, until: now + holdLimitMillis })
  }
  for (const hold of held) wanted.add(hold.reference)
  return { wanted: [...wanted], held }
}

export interface PinChanges {
  /** Records to label pinned (with preheat's marker). */
  readonly pin: ReadonlyArray<string>
  /** Records whose pin preheat set and no tag wants any more. */
  readonly unpin: ReadonlyArray<string>
}

const isPinned = (record: ImageRecord): boolean => record.labels[pinnedLabel] === pinnedValue
const isOurs = (record: ImageRecord): boolean => record.labels[preheatPinLabel] === preheatPinValue

/**
 * The label changes that make the node's image records match the wanted references (pure). A
 * reference stands for the whole image the runtime resolves it to (CRI groups names by image id):
 * every record CRI created for it (the id, each repoTag and repoDigest) is pinned, since the
 * kubelet collects images by id. A record already pinned by someone else is left as it is, so its
 * pin is never taken away by us later; a record we pinned that no wanted image names is unpinned.
 */
export const decidePins = (
  wanted: ReadonlyArray<string>,
  images: ReadonlyArray<ImageInfo>,
  records: ReadonlyArray<ImageRecord>
): PinChanges => {
  const names = new Set<string>()
  for (const reference of wanted) {
    const image = findImage(reference, images)
    if (image !== undefined) for (const name of [image.id, ...image.repoTags, ...image.repoDigests]) names.add(name)
  }
  const pin: Array<string> = []
  const unpin: Array<string> = []
  for (const record of records) {
    if (names.has(record.name)) {
      if (!isPinned(record)) pin.push(record.name)
    } else if (isOurs(record)) {
      unpin.push(record.name)
    }
  }
  return { pin, unpin }
}

/** The labels a pin sets, and an unpin removes. */
export const pinLabels = { [pinnedLabel]: pinnedValue, [preheatPinLabel]: preheatPinValue } as const
export const unpinLabels = { [pinnedLabel]: undefined, [preheatPinLabel]: undefined } as const
