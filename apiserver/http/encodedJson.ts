// The JSON text of stored objects, made once per version. A NodeImage version goes to its writer
// and to every watcher (the controller's, its node's daemon's), and was serialised anew for each.

/** One server's texts; a version's text goes when the version does (weakly held). */
export class EncodedJson {
  private readonly texts = new WeakMap<object, string>()

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
    }
    return text
  }
}
