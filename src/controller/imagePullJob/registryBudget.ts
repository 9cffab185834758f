import type { RegistryRoom } from "./registryRoom.ts"
import { roomOnRegistry } from "./registryRoom.ts"
import { stepPullLimit, type ThrottledLimit, wholeLimit } from "./registryPullLimit.ts"

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

/** What a job's nodes reported, as counted by its progress: the budget steps the limit on what is new. */
export interface JobReports {
  readonly succeeded: number
  readonly throttleReports: number
}

/** A registry's limit lowered by throttling: for the Event and the log. */
export interface LimitLowered {
  readonly registry: string
  /** The limit before; undefined when there was none. */
  readonly from: number | undefined
  readonly to: number
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
 *
 * The limit is per registry and moves (issue 28, part 3): `observe` feeds each job's new reports
 * to the registry's AIMD step (registryPullLimit.ts), which lowers it when nodes say the registry
 * throttles and raises it as pulls succeed, up to the flag's value. The books are kept with or
 * without the flag, since throttling can set a limit on any registry.
 */
export class RegistryBudget {
  /** `--max-concurrent-pulls-per-registry`: every registry's limit, unless throttling set a lower one. */
  readonly configured: number | undefined
  private readonly throttled = new Map<string, ThrottledLimit>()
  /** Each job's reports at its last look, so that only new ones move the limit. */
  private readonly seen = new Map<string, JobReports>()
  private readonly shares = new Map<string, Share>()
  private readonly registries = new Map<string, { inFlight: number; readonly jobs: Set<string> }>()
  /** Waiters woken and not yet decided again: not woken twice. */
  private readonly woken = new Set<string>()
  private sequence = 0

  constructor(configured: number | undefined) {
    this.configured = configured
  }

  /** A registry's limit now: throttling's, else the flag's; undefined when none holds. */
  limitOf(registry: string): number | undefined {
    const throttled = this.throttled.get(registry)
    return throttled === undefined ? this.configured : wholeLimit(throttled)
  }

  /** Each registry's limit now, for those with pulls in the books or a limit throttling set (the registry pull limit gauge). */
  limits(): ReadonlyMap<string, number> {
    const limits = new Map<string, number>()
    for (const registry of [...this.registries.keys(), ...this.throttled.keys()]) {
      const limit = this.limitOf(registry)
      if (limit !== undefined) limits.set(registry, limit)
    }
    return limits
  }

  /**
   * A job's reports at `now`: its new throttle reports and successes step its registry's limit.
   * Returns the lowering, if the limit went down.
   */
  observe(key: string, registry: string, reports: JobReports, now: number): LimitLowered | undefined {
    const before = this.seen.get(key)
    this.seen.set(key, { succeeded: reports.succeeded, throttleReports: reports.throttleReports })
    // A job's first look counts the nodes throttled now, not the successes of before (a new leader's first look).
    const succeeded = before === undefined ? 0 : Math.max(0, reports.succeeded - before.succeeded)
    const throttled = Math.max(0, reports.throttleReports - (before?.throttleReports ?? 0))
    if (succeeded === 0 && throttled === 0) return undefined
    const current = this.throttled.get(registry)
    const next = stepPullLimit(current, {
      now,
      throttled,
      succeeded,
      inFlight: this.inFlight(registry),
      held: this.heldBack(registry),
      max: this.configured
    })
    if (next === current) return undefined
    const from = this.limitOf(registry)
    if (next === undefined) this.throttled.delete(registry)
    else this.throttled.set(registry, next)
    const to = this.limitOf(registry)
    return to !== undefined && (from === undefined || to < from) ? { registry, from, to } : undefined
  }

  /** The job's room on its registry now, with `active` of its nodes pulling; undefined without a limit. */
  room(key: string, registry: string, active: number): RegistryRoom | undefined {
    const limit = this.limitOf(registry)
    if (limit === undefined) return undefined
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
    return { registry, limit, room: roomOnRegistry({ limit, othersInFlight, heldAhead, active }) }
  }

  /** Records a job's decision: its nodes pulling and held back. Returns the jobs to wake. */
  settle(key: string, registry: string, inFlight: number, held: number): ReadonlyArray<string> {
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
    this.seen.delete(key)
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
    if (entry === undefined) return []
    // No limit (throttling's went away, with no flag): whoever still waits under the old one goes.
    const free = (this.limitOf(registry) ?? Number.POSITIVE_INFINITY) - entry.inFlight
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
