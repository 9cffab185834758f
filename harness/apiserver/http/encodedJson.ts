// The JSON text of stored objects, made once per version. A NodeImage version goes to its writer
// and to every watcher (the controller's, its node's daemon's), and was serialised anew for each.

/** How many texts a server keeps at most: those of the versions it encoded last. */
const defaultLimit = 1024

/**
 * How many UTF-16 code units of text it keeps at most (16 Mi: 32 MiB of string at most, usually
 * 16 MiB of one-byte strings). A NodeImage of 500 images is about 100 KB of JSON: 1,024 of them
 * were 100 MB, held for as long as no smaller versions replaced them (issue 24).
 */
const defaultLimitChars = 16 * 1024 * 1024

/** One server's texts of the versions it sent last. */
export class EncodedJson {
  // The newest only, oldest dropped first: a version goes to its writer and its watchers right
  // after it is stored, and a watcher far behind encodes it again. Held as long as their versions
  // (a WeakMap), the texts of every version in the watch history (10,000 events a kind) stayed
  // alive: about 10 KB each for a NodeImage, hundreds of MB for the API server's GC to carry.
  private readonly texts = new Map<object, string>()
  private readonly limit: number
  private readonly limitChars: number
  private chars = 0

  constructor(limit = defaultLimit, limitChars = defaultLimitChars) {
    this.limit = limit
    this.limitChars = limitChars
  }

  /** How many texts are held, and their length in UTF-16 code units. */
  get held(): { readonly texts: number; readonly chars: number } {
    return { texts: this.texts.size, chars: this.chars }
  }

  /**
   * `JSON.stringify(value)`, made once for a frozen value: every frozen value this server hands
   * out is a stored version or a view of one, built from deeply frozen parts (storage/frozenJson.ts,
   * storage/servedVersion.ts), so it cannot change after its text is made.
   */
  of(value: unknown): string {
    if (typeof value !== "object" || value === null || !Object.isFrozen(value)) return JSON.stringify(value)
    let text = this.texts.get(value)
    if (text === undefined) {
      text = JSON.stringify(value)
      // A text larger than the whole budget is made each time, never held.
      if (text.length > this.limitChars) return text
      this.texts.set(value, text)
      this.chars += text.length
      while (this.texts.size > this.limit || this.chars > this.limitChars) {
        const [oldest, dropped] = this.texts.entries().next().value!
        this.texts.delete(oldest)
        this.chars -= dropped.length
      }
    }
    return text
  }
}
