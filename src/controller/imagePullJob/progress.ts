import type { NodeImage } from "../../api/nodeImage.ts"
import { takeWaiting } from "./decide.ts"
import { DigestTally } from "./digestTally.ts"
import { PreloadedTally } from "./preloadedTally.ts"
import type { TargetTally } from "./decide.ts"
import { nodeState } from "./nodeTask.ts"
import type { JobTask, NodeState } from "./nodeTask.ts"

/** A target's standing: its state for the task, or absent while its NodeImage is not in the store. */
type Standing = NodeState | "missing"

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
  private readonly position = new Map<string, number>()
  private readonly standing: Array<Standing>
  private readonly failures = new Map<number, { readonly message: string; readonly renewedBy: ReadonlyArray<string> }>()
  private readonly dirty = new Set<number>()
  private readonly digests = new DigestTally()
  private readonly preloaded = new PreloadedTally()
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
    this.standing = new Array<Standing>(names.length)
    names.forEach((name, i) => {
      this.position.set(name, i)
      this.standing[i] = "missing"
      this.missing++
      this.set(i, lookup(name))
    })
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
    return this.position.has(node)
  }

  /** A NodeImage whose tags of this job changed: looked at again by the next `refresh`. */
  touched(node: string): void {
    const i = this.position.get(node)
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
    const next: Standing = node === undefined ? "missing" : nodeState(node, this.task)
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
