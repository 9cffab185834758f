// Which nodes a job owns tags on is a set of up to thousands of names for each of up to hundreds
// of jobs. As maps of names, 10,000 nodes x 100 jobs cost about 46 MiB; numbered nodes in bit
// sets cost 1.25 KiB per job.

/** A small number for each node name, given back for reuse once the node is forgotten. */
export class NodeNumbers {
  private readonly byName = new Map<string, number>()
  private readonly names: Array<string | undefined> = []
  private readonly free: Array<number> = []

  numberOf(name: string): number {
    let n = this.byName.get(name)
    if (n === undefined) {
      n = this.free.pop() ?? this.names.length
      this.byName.set(name, n)
      this.names[n] = name
    }
    return n
  }

  nameOf(n: number): string {
    return this.names[n] ?? ""
  }

  /** The caller guarantees no NodeSet still holds the node's number. */
  forget(name: string): void {
    const n = this.byName.get(name)
    if (n === undefined) return
    this.byName.delete(name)
    this.names[n] = undefined
    this.free.push(n)
  }
}

/** A set of node numbers as bits. */
export class NodeSet {
  private words = new Uint32Array(4)
  size = 0

  add(n: number): void {
    const w = n >>> 5
    if (w >= this.words.length) {
      const grown = new Uint32Array(Math.max(w + 1, this.words.length * 2))
      grown.set(this.words)
      this.words = grown
    }
    const bit = 1 << (n & 31)
    if ((this.words[w]! & bit) === 0) {
      this.words[w] = this.words[w]! | bit
      this.size++
    }
  }

  delete(n: number): void {
    const w = n >>> 5
    const bit = 1 << (n & 31)
    if (w < this.words.length && (this.words[w]! & bit) !== 0) {
      this.words[w] = this.words[w]! & ~bit
      this.size--
    }
  }

  has(n: number): boolean {
    const w = n >>> 5
    return w < this.words.length && (this.words[w]! & (1 << (n & 31))) !== 0
  }

  *[Symbol.iterator](): IterableIterator<number> {
    for (let w = 0; w < this.words.length; w++) {
      let word = this.words[w]!
      while (word !== 0) {
        const low = word & -word
        yield (w << 5) + 31 - Math.clz32(low)
        word ^= low
      }
    }
  }
}
