// The indexes background garbage collection needs: which uids are alive, and which objects name
// an owner uid in their ownerReferences.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"

const ownerUids = (object: KubeObject | undefined): ReadonlyArray<string> => {
  const refs = object?.metadata.ownerReferences
  return Array.isArray(refs) ? refs.map((r) => r.uid) : []
}

export class DependentsIndex<Location> {
  private readonly byUid = new Map<string, Location>()
  /** Owner uid to the objects whose ownerReferences name it, by a key unique across kinds. */
  private readonly dependents = new Map<string, Map<string, Location>>()

  /** Records a change of the object at `location` (`next` undefined: it was removed). */
  update(location: Location, dependentKey: string, previous: KubeObject | undefined, next: KubeObject | undefined): void {
    const uid = (next ?? previous)?.metadata.uid
    if (uid !== undefined) {
      if (next === undefined) this.byUid.delete(uid)
      else if (previous === undefined) this.byUid.set(uid, location)
    }
    if (previous?.metadata.ownerReferences === next?.metadata.ownerReferences) return
    for (const owner of ownerUids(previous)) {
      const set = this.dependents.get(owner)
      set?.delete(dependentKey)
      if (set?.size === 0) this.dependents.delete(owner)
    }
    for (const owner of ownerUids(next)) {
      let set = this.dependents.get(owner)
      if (set === undefined) this.dependents.set(owner, (set = new Map()))
      set.set(dependentKey, location)
    }
  }

  isLive(uid: string): boolean {
    return this.byUid.has(uid)
  }

  /** The objects naming this owner, copied so that the caller may change the index meanwhile. */
  dependentsOf(uid: string): ReadonlyArray<Location> {
    const found = this.dependents.get(uid)
    return found === undefined ? [] : [...found.values()]
  }
}

/**
 * Background garbage collection of one dependent after an owner went: with no owner left it is
 * deleted (its own finalizers still apply); with some owners alive it only loses the references
 * to the owners that are gone.
 */
export const collectionOf = (
  object: KubeObject,
  isLive: (uid: string) => boolean
): { readonly action: "delete" } | { readonly action: "keep"; readonly owners: ReadonlyArray<unknown> } | undefined => {
  const refs = object.metadata.ownerReferences ?? []
  const live = refs.filter((ref) => isLive(ref.uid))
  if (live.length === 0) return { action: "delete" }
  if (live.length < refs.length) return { action: "keep", owners: live }
  return undefined
}
