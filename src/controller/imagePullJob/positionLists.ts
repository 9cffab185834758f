// Which of a job's targets (by position) are in which group, for the tallies of its progress
// (digests, what the nodes' kubelets do with the image), in the order they came.

interface List {
  head: number
  tail: number
  size: number
}

const none = -1

/**
 * Positions 0 .. capacity - 1 in lists by key, each list in the order its positions were added,
 * a position in one list at a time: what a Set of positions per key gave, in three numbers per
 * target (made at the first add) instead of a Set's entry per member, which for 10 jobs on 5,000
 * nodes each was 1.5 MiB for the digests alone.
 */
export class PositionLists<K> {
  private readonly capacity: number
  private readonly lists = new Map<K, List>()
  private readonly keyOf = new Map<number, K>()
  private readonly ids = new Map<K, number>()
  private next: Int32Array | undefined
  private prev: Int32Array | undefined
  /** The id of the list each position is in (0: none). */
  private member: Int32Array | undefined

  constructor(capacity: number) {
    this.capacity = capacity
  }

  /** Adds `position` at the end of `key`'s list; one in another list leaves it first. */
  add(key: K, position: number): void {
    this.check(position)
    const member = (this.member ??= new Int32Array(this.capacity))
    const next = (this.next ??= new Int32Array(this.capacity))
    const prev = (this.prev ??= new Int32Array(this.capacity))
    const id = this.idOf(key)
    if (member[position] === id) return
    if (member[position] !== 0) this.remove(this.keyOf.get(member[position]!)!, position)
    let list = this.lists.get(key)
    if (list === undefined) this.lists.set(key, (list = { head: none, tail: none, size: 0 }))
    member[position] = id
    next[position] = none
    prev[position] = list.tail
    if (list.tail === none) list.head = position
    else next[list.tail] = position
    list.tail = position
    list.size++
  }

  /** Takes `position` out of `key`'s list; false when it was not in it. */
  remove(key: K, position: number): boolean {
    this.check(position)
    const list = this.lists.get(key)
    const { member, next, prev } = this
    if (list === undefined || member === undefined || next === undefined || prev === undefined) return false
    if (member[position] !== this.ids.get(key)) return false
    const before = prev[position]!
    const after = next[position]!
    if (before === none) list.head = after
    else next[before] = after
    if (after === none) list.tail = before
    else prev[after] = before
    member[position] = 0
    list.size--
    // An emptied list is gone: one made again comes last, as a key deleted from a Map and set again.
    if (list.size === 0) this.lists.delete(key)
    return true
  }

  size(key: K): number {
    return this.lists.get(key)?.size ?? 0
  }

  /** The keys with a position, in the order their lists were made. */
  keys(): IterableIterator<K> {
    return this.lists.keys()
  }

  /** The positions of `key`'s list, in the order they were added. */
  *positions(key: K): IterableIterator<number> {
    const list = this.lists.get(key)
    if (list === undefined || this.next === undefined) return
    for (let p = list.head; p !== none; p = this.next[p]!) yield p
  }

  private idOf(key: K): number {
    let id = this.ids.get(key)
    if (id === undefined) {
      id = this.ids.size + 1
      this.ids.set(key, id)
      this.keyOf.set(id, key)
    }
    return id
  }

  private check(position: number): void {
    if (!Number.isInteger(position) || position < 0 || position >= this.capacity) {
      throw new RangeError(`position ${position} is not among ${this.capacity} targets`)
    }
  }
}
