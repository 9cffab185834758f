import type { RegistryRoom } from "./imagePullJob/registryRoom.ts"
import { roomOnRegistry } from "./imagePullJob/registryRoom.ts"

/** One job's standing on its registry, as of its last decision. */
interface Share {
  readonly registry: string
  /** Nodes pulling for the job: handed its tag, not yet final. */
  readonly inFlight: number
  /** Nodes the job would start now but for the registry's limit. */
  readonly held: number
  /** When it began waiting (a sequence number, lower waited longer); undefined while nothing is held. */
  readonly waitingSince: number | undefined
}

/**
 * The books of `--max-concurrent-pulls-per-registry` (issue 15, part 4): per registry host, the
 * nodes pulling for every job (ImagePullJobs and the children of ImageListPullJobs alike) and the
 * jobs held back, oldest waiter first. The ImagePullJob reconcile is its only writer: it reads a
 * job's room, decides and records the outcome in one synchronous step, so two jobs deciding at once
 * cannot both spend the same room. Counts lag the NodeImages only upward (a finished pull counts
 * until its job looks again), so the limit holds while reports race.
 *
 * Room freed by one job is owed to the jobs that waited longest: a job not held back leaves what
 * they wait for, and `settle`/`forget` name the waiters to wake, only as many as the free room
 * covers and each once until it has decided again, so freed room neither idles nor starts a storm.
 */
export class RegistryBudget {
  readonly limit: number | undefined
  private readonly shares = new Map<string, Share>()
  private readonly registries = new Map<string, { inFlight: number; readonly jobs: Set<string> }>()
  /** Waiters woken and not yet decided again: not woken twice. */
  private readonly woken = new Set<string>()
  private sequence = 0

  constructor(limit: number | undefined) {
    this.limit = limit
  }

  /** The job's room on its registry now, with `active` of its nodes pulling; undefined without a limit. */
  room(key: string, registry: string, active: number): RegistryRoom | undefined {
    if (this.limit === undefined) return undefined
    const own = this.shares.get(key)
    const mine = own?.registry === registry ? own : undefined
    const entry = this.registries.get(registry)
    let heldAhead = 0
    for (const job of entry?.jobs ?? []) {
      const share = this.shares.get(job)!
      if (job === key || share.waitingSince === undefined) continue
      if (mine?.waitingSince === undefined || share.waitingSince < mine.waitingSince) heldAhead += share.held
    }
    const othersInFlight = (entry?.inFlight ?? 0) - (mine?.inFlight ?? 0)
    return { registry, limit: this.limit, room: roomOnRegistry({ limit: this.limit, othersInFlight, heldAhead, active }) }
  }

  /** Records a job's decision: its nodes pulling and held back. Returns the jobs to wake. */
  settle(key: string, registry: string, inFlight: number, held: number): ReadonlyArray<string> {
    if (this.limit === undefined) return []
    const before = this.shares.get(key)
    this.woken.delete(key)
    this.remove(key)
    if (inFlight > 0 || held > 0) {
      const kept = before?.registry === registry ? before.waitingSince : undefined
      const waitingSince = held === 0 ? undefined : (kept ?? ++this.sequence)
      this.shares.set(key, { registry, inFlight, held, waitingSince })
      let entry = this.registries.get(registry)
      if (entry === undefined) this.registries.set(registry, (entry = { inFlight: 0, jobs: new Set() }))
      entry.inFlight += inFlight
      entry.jobs.add(key)
    }
    const wake = this.toWake(registry, key)
    return before === undefined || before.registry === registry ? wake : [...wake, ...this.toWake(before.registry, key)]
  }

  /** A job deleted or no longer acted on: its room goes to the waiters. Returns the jobs to wake. */
  forget(key: string): ReadonlyArray<string> {
    this.woken.delete(key)
    const before = this.shares.get(key)
    if (before === undefined) return []
    this.remove(key)
    return this.toWake(before.registry, key)
  }

  /** Nodes pulling from a registry, as the books have it. */
  inFlight(registry: string): number {
    return this.registries.get(registry)?.inFlight ?? 0
  }

  /** Nodes held back on a registry. */
  heldBack(registry: string): number {
    let held = 0
    for (const job of this.registries.get(registry)?.jobs ?? []) held += this.shares.get(job)!.held
    return held
  }

  private remove(key: string): void {
    const share = this.shares.get(key)
    if (share === undefined) return
    this.shares.delete(key)
    const entry = this.registries.get(share.registry)!
    entry.inFlight -= share.inFlight
    entry.jobs.delete(key)
    if (entry.jobs.size === 0) this.registries.delete(share.registry)
  }

  /**
   * The waiters owed the registry's free room, longest waiting first, until their held nodes cover
   * it; those already woken count but are not named again, nor is the job that just decided.
   */
  private toWake(registry: string, deciding: string): ReadonlyArray<string> {
    const entry = this.registries.get(registry)
    if (entry === undefined || this.limit === undefined) return []
    const free = this.limit - entry.inFlight
    if (free <= 0) return []
    const waiters = [...entry.jobs]
      .map((job) => [job, this.shares.get(job)!] as const)
      .filter(([job, share]) => share.waitingSince !== undefined && job !== deciding)
      .sort(([, a], [, b]) => a.waitingSince! - b.waitingSince!)
    const wake: Array<string> = []
    let covered = 0
    for (const [job, share] of waiters) {
      if (covered >= free) break
      covered += share.held
      if (this.woken.has(job)) continue
      this.woken.add(job)
      wake.push(job)
    }
    return wake
  }
}
