// A cluster's stored objects repeat themselves: every tag a job writes carries the same owner
// reference and pull policy, the daemons of a wave report the same phase, version and second, and
// every NodeImage repeats the image names. Held as separate copies, these made up most of the
// memory of a large cluster (about 3 KiB per node and job). The pool keeps one frozen copy of each
// small value that is still in use, and keeps the large keyed records (`spec.images`,
// `status.imageStatuses`) with sorted keys, so that thousands of NodeImages with the same images
// share one hidden class.

/** Objects and arrays with more entries than this are records keyed by name, not pooled values. */
export const maxPooledEntries = 16
/** Longer strings are rarely repeated; interning them would cost more than it saves. */
const maxPooledStringLength = 128
const arrayIndex = /^(?:0|[1-9][0-9]*)$/

/**
 * V8 keeps exactly one copy of each string used as a property name (internalised, and collected
 * when unused); a string built by concatenation is also flattened on the way.
 */
const internalise = (s: string): string => Object.keys({ [s]: 0 })[0] ?? s

/**
 * A large record (image name -> entry) as V8 keeps it cheapest: with its keys sorted, records
 * of the same names share one hidden class (a V8 dictionary would cost 60 bytes a key, and the
 * same names in different orders a hidden class each). Sorted keys are also what a real API
 * server returns for the maps of a custom resource.
 */
export const recordOf = (entries: Array<readonly [string, unknown]>): Record<string, unknown> =>
  Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

export class ValuePool {
  private readonly ids = new WeakMap<object, number>()
  /**
   * Pooled values met only once so far. No pooled value holds one (a holder is pooled only once
   * its members are, see keyOf), so a value holding one is new too: it is not looked up or pooled
   * until that member is met again. Most ancestors of a change are unique (an object's metadata
   * with its resourceVersion, its status, the object itself) and are never met again; keying and
   * pooling each of them cost more than the changed values themselves. A value that does repeat is
   * shared from its (depth + 2)-th occurrence on instead of its second.
   */
  private readonly once = new WeakSet<object>()
  /** What `settle` returned that the pool does not hold (records, objects holding one): a few per stored version. */
  private readonly settledOutside = new WeakSet<object>()
  private nextId = 1
  // Two generations: a value unused for two of them is let go, so the pool stays bounded. A
  // generation ends at `generation` values or `generationChars` characters of keys, whichever
  // comes first: a key is a value's members spelled out (up to 16 strings of 128 characters), so
  // the count alone let two generations hold up to about 45 MB of keys (issue 24).
  private young = new Map<string, object>()
  private old = new Map<string, object>()
  private youngChars = 0
  private readonly generation: number
  private readonly generationChars: number

  constructor(generation = 10_000, generationChars = 2 * 1024 * 1024) {
    this.generation = generation
    this.generationChars = generationChars
  }

  /** Whether `value` came out of this pool (so everything in it is pooled and frozen). */
  has(value: object): boolean {
    return this.ids.has(value)
  }

  /**
   * `share`, remembering the result as settled even when the pool does not hold it, so that a
   * value settled once is recognised at once wherever it goes next instead of being walked again.
   */
  settle<A extends object>(value: A): A {
    const shared = this.share(value)
    if (!this.ids.has(shared)) this.settledOutside.add(shared)
    return shared
  }

  /** Whether `value` came out of this pool's `share` or `settle`. */
  settled(value: object): boolean {
    return this.ids.has(value) || this.settledOutside.has(value)
  }

  string(value: string): string {
    return value.length > maxPooledStringLength || arrayIndex.test(value) ? value : internalise(value)
  }

  /**
   * The pooled copy of a frozen object or array whose members were pooled first: `value` itself
   * when it is the first of its kind, or when it cannot be pooled (too large, or holding a record).
   */
  share<A extends object>(value: A): A {
    const key = this.keyOf(value)
    if (key === undefined) return value
    let found = this.young.get(key)
    if (found === undefined) {
      found = this.old.get(key)
      if (found === undefined) {
        found = value
        this.ids.set(value, this.nextId++)
        this.once.add(value)
      } else this.once.delete(found)
      if (this.young.size >= this.generation || this.youngChars >= this.generationChars) {
        this.old = this.young
        this.young = new Map()
        this.youngChars = 0
      }
      this.young.set(key, found)
      this.youngChars += key.length
    } else this.once.delete(found)
    return found as A
  }

  private keyOf(value: object): string | undefined {
    const array = Array.isArray(value)
    const keys = array ? undefined : Object.keys(value)
    const length = array ? (value as ReadonlyArray<unknown>).length : keys!.length
    if (length > maxPooledEntries) return undefined
    // Joined once: a key built with += is a tree of string pieces, each an object of its own.
    const key: Array<string | number> = [array ? "[" : "{"]
    for (let i = 0; i < length; i++) {
      const name = keys?.[i]
      const member: unknown = name === undefined ? (value as ReadonlyArray<unknown>)[i] : (value as Record<string, unknown>)[name]
      if (name !== undefined) key.push(name.length, ":", name)
      switch (typeof member) {
        case "string":
          if (member.length > maxPooledStringLength) return undefined
          key.push("s", member.length, ":", member)
          break
        case "number":
          key.push("n", member, ";")
          break
        case "boolean":
          key.push(member ? "t" : "f")
          break
        default: {
          if (member === null) {
            key.push("z")
            break
          }
          const id = this.ids.get(member as object)
          if (id === undefined || this.once.has(member as object)) return undefined
          key.push("#", id, ";")
        }
      }
    }
    return key.join("")
  }
}
