import type { NodeImage } from "../../api/nodeImage.ts"
import { takeWaiting } from "./decide.ts"
import { DigestTally } from "./digestTally.ts"
import { PreloadedTally } from "./preloadedTally.ts"
import type { TargetTally } from "./decide.ts"
import { nodeState } from "./nodeTask.ts"
import type { JobTask, NodeState } from "./nodeTask.ts"

/** A target's standing: its state for the task, or absent while its NodeImage is not in the store. */
type Standing = NodeState | "missing"

const notSynced: NodeState = { phase: "notSynced" }
const active: NodeState = { phase: "active" }

/**
 * The targets' states, each distinct one held once: a job's succeeded nodes mostly report one
 * digest and one verdict, and an object per target was a tenth of the controller's heap (10 jobs).
 */
class States {
  private readonly succeeded = new Map<string, NodeState>()

  of(state: NodeState): NodeState {
    switch (state.phase) {
      case "notSynced":
        return notSynced
      case "active":
        return state.throttled === undefined ? active : state
      case "succeeded": {
        const key = JSON.stringify([state.digest ?? null, state.preloaded.access, state.preloaded.why, state.authenticated])
        const known = this.succeeded.get(key)
        if (known !== undefined) return known
        this.succeeded.set(key, state)
        return state
      }
      case "failed":
        return state
    }
  }
}

/**
 * One job's targets and where each stands for its task, kept up to date node by node: the change
 * handlers mark the NodeImages whose tags of this job changed, and the next reconcile looks at
 * those only. Walking every target on every reconcile was most of a large job's cost (2,000
 * targets, a reconcile per batch of reports). Built anew when the targets or the task change.
 */
export class JobProgress {
  readonly fingerprint: string
  readonly names: ReadonlyArray<string>
  private readonly task: JobTask
  /** The positions sorted by name, to find a target's (4 bytes a target; a Map of names was ten times that). */
  private readonly byName: Int32Array
  private readonly standing: Array<Standing>
  private readonly states = new States()
  private readonly failures = new Map<number, { readonly message: string; readonly renewedBy: ReadonlyArray<string> }>()
  private readonly dirty = new Set<number>()
  private readonly digests: DigestTally
  private readonly preloaded: PreloadedTally
  private active = 0
  private succeeded = 0
  /** Throttled reports seen: a node's new throttled status counts once (nodeState's `throttled` message differs per retry). */
  private throttleReports = 0
  private missing = 0
  private unsynced = 0
  /** Every target before this one has the job's tag (or no NodeImage). */
  private cursor = 0
  /** Whether the job's tags outside its targets and task were released since the targets or task last changed. */
  staleReleased = false

  constructor(fingerprint: string, names: ReadonlyArray<string>, task: JobTask, lookup: (name: string) => NodeImage | undefined) {
    this.fingerprint = fingerprint
    this.names = names
    this.task = task
    this.byName = Int32Array.from(names.keys()).sort((a, b) => compare(names[a]!, names[b]!))
    this.digests = new DigestTally(names.length)
    this.preloaded = new PreloadedTally(names.length)
    this.standing = new Array<Standing>(names.length)
    names.forEach((name, i) => {
      this.standing[i] = "missing"
      this.missing++
      this.set(i, lookup(name))
    })
  }

  /** The target's position, by binary search of the names in order. */
  private positionOf(node: string): number | undefined {
    let low = 0
    let high = this.byName.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compare(this.names[this.byName[middle]!]!, node) < 0) low = middle + 1
      else high = middle
    }
    const position = this.byName[low]
    return position !== undefined && this.names[position] === node ? position : undefined
  }

  /** Whether this progress is about the same targets and the same task. */
  matches(fingerprint: string, task: JobTask): boolean {
    return (
      fingerprint === this.fingerprint &&
      task.image === this.task.image &&
      task.tag === this.task.tag &&
      task.owner.uid === this.task.owner.uid
    )
  }

  has(node: string): boolean {
    return this.positionOf(node) !== undefined
  }

  /** A NodeImage whose tags of this job changed: looked at again by the next `refresh`. */
  touched(node: string): void {
    const i = this.positionOf(node)
    if (i !== undefined) this.dirty.add(i)
  }

  /** Reads the touched NodeImages again. */
  refresh(lookup: (name: string) => NodeImage | undefined): void {
    for (const i of this.dirty) this.set(i, lookup(this.names[i]!))
    this.dirty.clear()
  }

  /** How many targets have the job's tag. */
  get synced(): number {
    return this.names.length - this.missing - this.unsynced
  }

  tally(lookup: (name: string) => NodeImage | undefined): TargetTally {
    const failed = [...this.failures].sort(([a], [b]) => a - b).map(([i, failure]) => ({ node: this.names[i]!, ...failure }))
    return {
      desired: this.names.length - this.missing,
      active: this.active,
      succeeded: this.succeeded,
      throttleReports: this.throttleReports,
      failed,
      digests: this.digests.summary((i) => this.names[i]!),
      preloaded: this.preloaded.summary((i) => this.names[i]!),
      waiting: (limit, fits) => takeWaiting(this.waiting(lookup), limit, fits),
      synced: () => this.collect((s) => s !== "missing" && s.phase !== "notSynced", lookup),
      unfinished: () =>
        [...this.collect((s) => s !== "missing" && (s.phase === "notSynced" || s.phase === "active"), lookup)].map(
          (n) => n.metadata.name ?? ""
        ),
      targets: (node) => this.has(node)
    }
  }

  private *waiting(lookup: (name: string) => NodeImage | undefined): Iterable<NodeImage> {
    while (this.cursor < this.standing.length && !this.isWaiting(this.cursor)) this.cursor++
    for (let i = this.cursor; i < this.standing.length; i++) {
      if (!this.isWaiting(i)) continue
      const node = lookup(this.names[i]!)
      if (node !== undefined) yield node
    }
  }

  private isWaiting(i: number): boolean {
    const s = this.standing[i]!
    return s !== "missing" && s.phase === "notSynced"
  }

  private *collect(keep: (s: Standing) => boolean, lookup: (name: string) => NodeImage | undefined): Iterable<NodeImage> {
    for (let i = 0; i < this.standing.length; i++) {
      if (!keep(this.standing[i]!)) continue
      const node = lookup(this.names[i]!)
      if (node !== undefined) yield node
    }
  }

  private set(i: number, node: NodeImage | undefined): void {
    const before = this.standing[i]!
    this.count(before, -1, i)
    const next: Standing = node === undefined ? "missing" : this.states.of(nodeState(node, this.task))
    if (next !== "missing" && next.phase === "active" && next.throttled !== undefined) {
      if (before === "missing" || before.phase !== "active" || before.throttled !== next.throttled) this.throttleReports++
    }
    this.standing[i] = next
    this.count(next, 1, i)
    if (next !== "missing" && next.phase === "notSynced" && i < this.cursor) this.cursor = i
  }

  private count(s: Standing, delta: 1 | -1, i: number): void {
    if (s === "missing") this.missing += delta
    else if (s.phase === "notSynced") this.unsynced += delta
    else if (s.phase === "active") this.active += delta
    else if (s.phase === "succeeded") {
      this.succeeded += delta
      if (delta === 1) this.preloaded.add(i, s.preloaded, s.authenticated)
      else this.preloaded.remove(i, s.preloaded, s.authenticated)
      if (s.digest === undefined) return
      if (delta === 1) this.digests.add(s.digest, i)
      else this.digests.remove(s.digest, i)
    } else if (s.phase === "failed") {
      if (delta === 1) this.failures.set(i, { message: s.message, renewedBy: s.renewedBy })
      else this.failures.delete(i)
    }
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
