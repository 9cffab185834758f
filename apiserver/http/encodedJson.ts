// The JSON text of stored objects, made once per version. A NodeImage version goes to its writer
// and to every watcher (the controller's, its node's daemon's), and was serialised anew for each.

/** How many texts a server keeps: those of the versions it encoded last. */
const defaultLimit = 1024

/** One server's texts of the versions it sent last. */
export class EncodedJson {
  // The newest only, oldest dropped first: a version goes to its writer and its watchers right
  // after it is stored, and a watcher far behind encodes it again. Held as long as their versions
  // (a WeakMap), the texts of every version in the watch history (10,000 events a kind) stayed
  // alive: about 10 KB each for a NodeImage, hundreds of MB for the API server's GC to carry.
  private readonly texts = new Map<object, string>()
  private readonly limit: number

  constructor(limit = defaultLimit) {
    this.limit = limit
  }

  /**
   * `JSON.stringify(value)`, made once for a frozen value: every frozen value this server hands
   * out is a stored version or a view of one, built from deeply frozen parts (src/kube/frozenJson.ts,
   * storage/servedVersion.ts), so it cannot change after its text is made.
   */
  of(value: unknown): string {
    if (typeof value !== "object" || value === null || !Object.isFrozen(value)) return JSON.stringify(value)
    let text = this.texts.get(value)
    if (text === undefined) {
      text = JSON.stringify(value)
      this.texts.set(value, text)
      if (this.texts.size > this.limit) this.texts.delete(this.texts.keys().next().value!)
    }
    return text
  }
}
