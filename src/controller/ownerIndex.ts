import { isThrottledReport } from "../api/registryThrottle.ts"
import type { ImageSpec, ImageTagStatus, NodeImage } from "../api/nodeImage.ts"
import { renewedProviders } from "../api/providerRenewal.ts"
import type { Stored, StoreIndex } from "../kube/store.ts"
import { NodeNumbers, NodeSet } from "./nodeSet.ts"

/**
 * Which nodes and images each job owns tags in, kept from NodeImage changes, so that a job's
 * clean-up and the enqueueing of a change touch only the NodeImages involved (SPEC §4.8).
 */
export class OwnerIndex implements StoreIndex<NodeImage> {
  private readonly nodes = new NodeNumbers()
  /** Job uid -> image -> the nodes where the job owns a tag of that image (usually one image). */
  private readonly byOwner = new Map<string, Map<string, NodeSet>>()

  /**
   * Replaces what one NodeImage contributes. Only image entries that changed are looked at:
   * stores share unchanged entries between versions, so a status report costs nothing here.
   */
  update(node: string, previous: Stored<NodeImage> | undefined, current: Stored<NodeImage> | undefined): void {
    const before = previous?.view.spec.images ?? {}
    const after = current?.view.spec.images ?? {}
    const n = this.nodes.numberOf(node)
    for (const image of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (before[image] === after[image]) continue
      for (const uid of ownersOf(before[image])) this.remove(uid, image, n)
      for (const uid of ownersOf(after[image])) this.add(uid, image, n)
    }
    // Every tag of a deleted NodeImage was removed above, so its number is free again.
    if (current === undefined) this.nodes.forget(node)
  }

  /** The nodes where the job owns a tag. */
  *nodesOf(uid: string): Iterable<string> {
    const images = [...(this.byOwner.get(uid)?.values() ?? [])]
    if (images.length === 1) {
      for (const n of images[0]!) yield this.nodes.nameOf(n)
      return
    }
    const seen = new Set<number>()
    for (const set of images) for (const n of set) seen.add(n)
    for (const n of seen) yield this.nodes.nameOf(n)
  }

  /** Every (node, image) where the job owns a tag. */
  *imagesOf(uid: string): Iterable<readonly [node: string, image: string]> {
    for (const [image, set] of this.byOwner.get(uid) ?? []) {
      for (const n of set) yield [this.nodes.nameOf(n), image]
    }
  }

  /** How many images the job owns tags of anywhere, and on how many nodes it owns a tag of `image`. */
  footprint(uid: string, image: string): { readonly images: number; readonly nodes: number } {
    const images = this.byOwner.get(uid)
    return { images: images?.size ?? 0, nodes: images?.get(image)?.size ?? 0 }
  }

  private add(uid: string, image: string, n: number): void {
    let images = this.byOwner.get(uid)
    if (images === undefined) this.byOwner.set(uid, (images = new Map()))
    let set = images.get(image)
    if (set === undefined) images.set(image, (set = new NodeSet()))
    set.add(n)
  }

  private remove(uid: string, image: string, n: number): void {
    const images = this.byOwner.get(uid)
    const set = images?.get(image)
    if (images === undefined || set === undefined) return
    set.delete(n)
    if (set.size === 0) images.delete(image)
    if (images.size === 0) this.byOwner.delete(uid)
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
 * to another job's tag of the same image wakes only that job (SPEC §4.8). A throttled attempt's
 * report is news: it lowers the registry's limit (imagePullJob/registryBudget.ts observe). So is a new image
 * verification policy of the node's kubelet, to every job with a tag there (the node's
 * Preloaded* conditions): it comes with a daemon's start or its kubelet's new configuration, rarely.
 */
export const changedOwners = (previous: NodeImage | undefined, current: NodeImage | undefined): Set<string> => {
  const uids = new Set<string>()
  const images = new Set([...Object.keys(previous?.spec.images ?? {}), ...Object.keys(current?.spec.images ?? {})])
  if (previous !== undefined && current !== undefined) {
    const before = previous.status?.kubeletImageVerification
    const after = current.status?.kubeletImageVerification
    if (!same(before, after)) {
      for (const image of images) {
        for (const uid of [...ownersOf(previous.spec.images?.[image]), ...ownersOf(current.spec.images?.[image])]) uids.add(uid)
      }
      return uids
    }
  }
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
      const outcomeBefore = jobOutcome(statusBefore?.tags.find((t) => t.tag === tag))
      const outcomeAfter = jobOutcome(statusAfter?.tags.find((t) => t.tag === tag))
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

/**
 * What a job reads from a tag's report: its outcome, each throttled attempt's report, and a failed
 * tag's credential providers found answering anew (a reason to pull again).
 */
const jobOutcome = (report: ImageTagStatus | undefined) =>
  isThrottledReport(report) ? `throttled:${report?.message ?? ""}` : `${outcome(report)}|renewed:${renewedProviders(report).join(",")}`

/** Identity first (stores share unchanged subtrees), then content (a live server does not). */
const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)
