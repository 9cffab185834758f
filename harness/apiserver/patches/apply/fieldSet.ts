// A set of field paths, as structured-merge-diff's fieldpath.Set: a trie whose edges are path
// elements written as in managedFields' FieldsV1 (`f:name` a field, `k:{"name":"a"}` a list item by
// its keys, `v:"x"` an item of a set, `i:0` an index). A node is a member when its path itself is
// in the set; FieldsV1 writes that as `".": {}` beside its children, or `{}` for a leaf.

/** One path element, in its FieldsV1 form. */
export type PathElement = string
export type FieldPath = ReadonlyArray<PathElement>

export class FieldSet {
  member = false
  readonly children = new Map<PathElement, FieldSet>()

  static of(paths: Iterable<FieldPath>): FieldSet {
    const set = new FieldSet()
    for (const path of paths) set.insert(path)
    return set
  }

  insert(path: FieldPath): this {
    let node: FieldSet = this
    for (const element of path) {
      let child = node.children.get(element)
      if (child === undefined) node.children.set(element, (child = new FieldSet()))
      node = child
    }
    node.member = true
    return this
  }

  has(path: FieldPath): boolean {
    const node = this.at(path)
    return node?.member === true
  }

  /** The subtree under a path (its members relative to it), if any. */
  at(path: FieldPath): FieldSet | undefined {
    let node: FieldSet | undefined = this
    for (const element of path) {
      node = node.children.get(element)
      if (node === undefined) return undefined
    }
    return node
  }

  isEmpty(): boolean {
    if (this.member) return false
    for (const child of this.children.values()) if (!child.isEmpty()) return false
    return true
  }

  /** Every member path, parents before children, children in FieldsV1 order. */
  *paths(prefix: Array<PathElement> = []): Generator<FieldPath> {
    if (this.member) yield [...prefix]
    for (const element of sortedElements(this.children.keys())) {
      prefix.push(element)
      yield* this.children.get(element)!.paths(prefix)
      prefix.pop()
    }
  }

  union(other: FieldSet): FieldSet {
    return combine(this, other, (a, b) => a || b, true)
  }

  /** Members of this set that are not members of the other (their children stay). */
  difference(other: FieldSet): FieldSet {
    return combine(this, other, (a, b) => a && !b, false)
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet()
    out.member = this.member && other.member
    for (const [element, child] of this.children) {
      const theirs = other.children.get(element)
      if (theirs === undefined) continue
      const both = child.intersection(theirs)
      if (!both.isEmpty()) out.children.set(element, both)
    }
    return out
  }

  /** This set without every member of the other and everything under it. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet()
    out.member = this.member && !other.member
    for (const [element, child] of this.children) {
      const theirs = other.children.get(element)
      if (theirs?.member === true) continue
      const kept = theirs === undefined ? child.copy() : child.recursiveDifference(theirs)
      if (!kept.isEmpty()) out.children.set(element, kept)
    }
    return out
  }

  copy(): FieldSet {
    return this.union(new FieldSet())
  }

  equals(other: FieldSet): boolean {
    return this.difference(other).isEmpty() && other.difference(this).isEmpty()
  }

  /** The set as managedFields' FieldsV1 object. */
  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    if (this.member && this.children.size > 0) out["."] = {}
    for (const element of sortedElements(this.children.keys())) {
      const child = this.children.get(element)!
      if (!child.isEmpty()) out[element] = child.toFieldsV1()
    }
    return out
  }

  /** A FieldsV1 object as a set, or undefined when it is not one. */
  static fromFieldsV1(value: unknown): FieldSet | undefined {
    const root = new FieldSet()
    const read = (node: FieldSet, json: unknown, depth: number): boolean => {
      if (typeof json !== "object" || json === null || Array.isArray(json) || depth > 256) return false
      const entries = Object.entries(json)
      if (entries.length === 0) {
        node.member = true
        return true
      }
      for (const [key, child] of entries) {
        if (key === ".") {
          node.member = true
          continue
        }
        if (!/^[fkvi]:/.test(key)) return false
        const next = new FieldSet()
        if (!read(next, child, depth + 1)) return false
        node.children.set(key, next)
      }
      return true
    }
    // The root itself is never a member: an empty FieldsV1 is an empty set.
    if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) return root
    return read(root, value, 0) ? root : undefined
  }
}

const combine = (a: FieldSet, b: FieldSet, member: (x: boolean, y: boolean) => boolean, keepB: boolean): FieldSet => {
  const out = new FieldSet()
  out.member = member(a.member, b.member)
  const empty = new FieldSet()
  const elements = keepB ? new Set([...a.children.keys(), ...b.children.keys()]) : a.children.keys()
  for (const element of elements) {
    const child = combine(a.children.get(element) ?? empty, b.children.get(element) ?? empty, member, keepB)
    if (!child.isEmpty()) out.children.set(element, child)
  }
  return out
}

// structured-merge-diff orders path elements: field names, then keys, then values, then indices.
const kindOrder: Readonly<Record<string, number>> = { f: 0, k: 1, v: 2, i: 3 }

const compareElements = (a: PathElement, b: PathElement): number => {
  const byKind = (kindOrder[a[0]!] ?? 4) - (kindOrder[b[0]!] ?? 4)
  if (byKind !== 0) return byKind
  if (a[0] === "i") return Number(a.slice(2)) - Number(b.slice(2))
  return a < b ? -1 : a > b ? 1 : 0
}

const sortedElements = (elements: Iterable<PathElement>): Array<PathElement> => [...elements].sort(compareElements)

// ---- path elements ---------------------------------------------------------------------------

export const fieldElement = (name: string): PathElement => `f:${name}`

export const valueElement = (value: unknown): PathElement => `v:${JSON.stringify(value)}`

export const indexElement = (index: number): PathElement => `i:${index}`

/** A list item by its key fields, sorted by name as structured-merge-diff writes them. */
export const keyElement = (fields: Readonly<Record<string, unknown>>): PathElement => {
  const sorted: Record<string, unknown> = {}
  for (const name of Object.keys(fields).sort()) sorted[name] = fields[name]
  return `k:${JSON.stringify(sorted)}`
}

/** A path as kube-apiserver prints it in conflicts: `.spec.containers[name="app"].image`. */
export const formatPath = (path: FieldPath): string =>
  path
    .map((element) => {
      const body = element.slice(2)
      switch (element[0]) {
        case "f":
          return `.${body}`
        case "k": {
          const fields = JSON.parse(body) as Record<string, unknown>
          return `[${Object.entries(fields)
            .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
            .join(",")}]`
        }
        case "v":
          return `[=${body}]`
        default:
          return `[${body}]`
      }
    })
    .join("")
