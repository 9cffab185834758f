import type { ImageSpec, NodeImage } from "../api/nodeImage.ts"

/**
 * Which nodes and images each job owns tags in, kept from NodeImage changes, so that a job's
 * clean-up and the enqueueing of a change touch only the NodeImages involved (SPEC §4.8).
 */
export class OwnerIndex {
  // A job owns one image on a node, except while an edit moves it to another image: a plain
  // string then, since a Set for each of a million (node, job) pairs cost more than the tags.
  private readonly byOwner = new Map<string, Map<string, string | Set<string>>>()

  /**
   * Replaces what one NodeImage contributes. Only image entries that changed are looked at:
   * stores share unchanged entries between versions, so a status report costs nothing here.
   */
  update(node: string, previous: NodeImage | undefined, current: NodeImage | undefined): void {
    const before = previous?.spec.images ?? {}
    const after = current?.spec.images ?? {}
    for (const image of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (before[image] === after[image]) continue
      for (const uid of ownersOf(before[image])) this.remove(uid, node, image)
      for (const uid of ownersOf(after[image])) this.add(uid, node, image)
    }
  }

  /** The nodes where the job owns a tag. */
  nodesOf(uid: string): Iterable<string> {
    return this.byOwner.get(uid)?.keys() ?? []
  }

  /** Every (node, image) where the job owns a tag. */
  *imagesOf(uid: string): Iterable<readonly [node: string, image: string]> {
    for (const [node, images] of this.byOwner.get(uid) ?? []) {
      if (typeof images === "string") yield [node, images]
      else for (const image of images) yield [node, image]
    }
  }

  private add(uid: string, node: string, image: string): void {
    let nodes = this.byOwner.get(uid)
    if (nodes === undefined) this.byOwner.set(uid, nodes = new Map())
    const images = nodes.get(node)
    if (images === undefined || images === image) nodes.set(node, image)
    else if (typeof images === "string") nodes.set(node, new Set([images, image]))
    else images.add(image)
  }

  private remove(uid: string, node: string, image: string): void {
    const nodes = this.byOwner.get(uid)
    const images = nodes?.get(node)
    if (nodes === undefined || images === undefined) return
    if (typeof images === "string") {
      if (images === image) nodes.delete(node)
    } else {
      images.delete(image)
      if (images.size === 1) nodes.set(node, images.values().next().value!)
    }
    if (nodes.size === 0) this.byOwner.delete(uid)
  }
}

const ownersOf = (entry: ImageSpec | undefined): Set<string> => {
  const uids = new Set<string>()
  for (const tag of entry?.tags ?? []) {
    for (const owner of tag.ownerReferences ?? []) if (owner.uid !== undefined) uids.add(owner.uid)
  }
  return uids
}

/**
 * The owners whose tags changed in a way a job acts on, between two versions of a NodeImage:
 * the tag itself (owners, version, policy) or its outcome. Progress and Pulling-vs-unreported are
 * not news to a job (both count as active), so a daemon's progress reports wake no job; a change
 * to another job's tag of the same image wakes only that job (SPEC §4.8).
 */
export const changedOwners = (previous: NodeImage | undefined, current: NodeImage | undefined): Set<string> => {
  const uids = new Set<string>()
  const images = new Set([...Object.keys(previous?.spec.images ?? {}), ...Object.keys(current?.spec.images ?? {})])
  for (const image of images) {
    const before = previous?.spec.images?.[image]
    const after = current?.spec.images?.[image]
    const statusBefore = previous?.status?.imageStatuses?.[image]
    const statusAfter = current?.status?.imageStatuses?.[image]
    if (before === after && statusBefore === statusAfter) continue
    const tags = new Set([...(before?.tags ?? []), ...(after?.tags ?? [])].map((t) => t.tag))
    for (const tag of tags) {
      const specBefore = before?.tags.find((t) => t.tag === tag)
      const specAfter = after?.tags.find((t) => t.tag === tag)
      const outcomeBefore = outcome(statusBefore?.tags.find((t) => t.tag === tag))
      const outcomeAfter = outcome(statusAfter?.tags.find((t) => t.tag === tag))
      if (same(specBefore, specAfter) && outcomeBefore === outcomeAfter) continue
      for (const owner of [...(specBefore?.ownerReferences ?? []), ...(specAfter?.ownerReferences ?? [])]) {
        if (owner.uid !== undefined) uids.add(owner.uid)
      }
    }
  }
  return uids
}

/**
 * Whether a NodeImage change is work for its own reconcile: the tasks, the labels, or an outcome
 * (a finished tag starts its TTL). Progress reports are not.
 */
export const nodeImageChanged = (previous: NodeImage | undefined, current: NodeImage | undefined): boolean => {
  if (previous === undefined || current === undefined) return true
  if (!same(previous.metadata.labels, current.metadata.labels)) return true
  const specBefore = previous.spec.images ?? {}
  const specAfter = current.spec.images ?? {}
  if (specBefore !== specAfter) {
    const keys = new Set([...Object.keys(specBefore), ...Object.keys(specAfter)])
    for (const image of keys) if (!same(specBefore[image], specAfter[image])) return true
  }
  const before = previous.status?.imageStatuses ?? {}
  const after = current.status?.imageStatuses ?? {}
  if (before === after) return false
  for (const image of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[image]?.tags ?? []
    const b = after[image]?.tags ?? []
    if (a === b) continue
    if (a.length !== b.length) return true
    for (const report of b) {
      if (outcome(a.find((t) => t.tag === report.tag)) !== outcome(report)) return true
    }
  }
  return false
}

/** What a job reads from a tag's report: only finished outcomes, per version. */
const outcome = (report: { readonly phase: string; readonly version?: number; readonly message?: string } | undefined) =>
  report === undefined || report.phase === "Pulling" || report.phase === "Waiting"
    ? "active"
    : `${report.phase}@${report.version ?? 0}:${report.message ?? ""}`

/** Identity first (stores share unchanged subtrees), then content (a live server does not). */
const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)
