import { Clock, Deferred, Duration, Effect } from "effect"
import type { Scope } from "effect"
import type { WorkQueue } from "./Scheduler.ts"

/**
 * What only the queue knows, for metrics: how long a due key waited for a worker. Depth is not
 * pushed here; a gauge reads `size` when scraped. Runs as part of `take`, so it must be cheap.
 */
export interface QueueObserver {
  readonly onTaken?: (queue: string, key: string, waitedMillis: number) => Effect.Effect<void>
}

/** A waiting key. `seq` breaks ties between equal due times so they come out in add order. */
interface Entry {
  readonly key: string
  due: number
  seq: number
  index: number
}

const before = (a: Entry, b: Entry): boolean => a.due < b.due || (a.due === b.due && a.seq < b.seq)

/**
 * Binary min-heap on (due, seq) that keeps each entry's position, so an earlier re-add moves its
 * entry up in O(log n) instead of leaving a stale copy behind: memory stays one entry per key
 * however many millions of adds arrive.
 */
class DueHeap {
  private readonly entries: Array<Entry> = []

  peek(): Entry | undefined {
    return this.entries[0]
  }

  push(entry: Entry): void {
    entry.index = this.entries.length
    this.entries.push(entry)
    this.up(entry)
  }

  pop(): Entry | undefined {
    const top = this.entries[0]
    const last = this.entries.pop()
    if (top === undefined || last === undefined) return undefined
    if (last !== top) {
      this.place(last, 0)
      this.down(last)
    }
    return top
  }

  clear(): void {
    this.entries.length = 0
  }

  /** Call after lowering entry's (due, seq). */
  up(entry: Entry): void {
    let i = entry.index
    while (i > 0) {
      const parentIndex = (i - 1) >> 1
      const parent = this.entries[parentIndex]!
      if (!before(entry, parent)) break
      this.place(parent, i)
      i = parentIndex
    }
    this.place(entry, i)
  }

  private down(entry: Entry): void {
    const n = this.entries.length
    let i = entry.index
    while (true) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      let child = this.entries[left]!
      if (right < n && before(this.entries[right]!, child)) child = this.entries[right]!
      if (!before(child, entry)) break
      const childIndex = child.index
      this.place(child, i)
      i = childIndex
    }
    this.place(entry, i)
  }

  private place(entry: Entry, i: number): void {
    this.entries[i] = entry
    entry.index = i
  }
}

/**
 * One queue. All state changes happen inside single `Effect.sync` steps, so they are atomic
 * between fibers. Waiting keys live in one heap ordered by due time then add order, which gives
 * both FIFO among due keys and "a due key never waits behind a delayed one". Keys being worked
 * on are not in the heap; a re-add for them is parked until `done`.
 */
export const makeWorkQueue = (name: string, observer: QueueObserver = {}): Effect.Effect<WorkQueue, never, Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* Clock.Clock
    const heap = new DueHeap()
    const waiting = new Map<string, Entry>()
    const processing = new Set<string>()
    /** Earliest due time requested for a key while it was being worked on. */
    const parked = new Map<string, number>()
    let seq = 0
    let closed = false
    /**
     * Takers waiting, each on a signal of its own, in the order they began to wait. A change wakes
     * one of them, not all: every wake-up is a fiber resumed and a poll, and all but one found
     * nothing and went back to waiting (a sleep raced against the next wake-up, each a fiber).
     */
    const waiters = new Set<Deferred.Deferred<void>>()
    /** The waiter sleeping until the head falls due, and when it wakes: no other waiter needs a timer for a later head. */
    let alarm: { readonly signal: Deferred.Deferred<void>; readonly at: number } | undefined

    const wakeOne = (): void => {
      for (const waiter of waiters) {
        waiters.delete(waiter)
        Deferred.doneUnsafe(waiter, Effect.void)
        return
      }
    }

    /**
     * Called when the head may have changed: at a new head, and after a take while keys wait. A
     * due head gets a waiter; a delayed one a waiter with a timer, unless one wakes by its time.
     */
    const wake = (): void => {
      const head = heap.peek()
      if (head === undefined) return
      if (alarm !== undefined && alarm.at <= head.due && head.due > clock.currentTimeMillisUnsafe()) return
      wakeOne()
    }

    const enqueue = (key: string, due: number): void => {
      const existing = waiting.get(key)
      if (existing === undefined) {
        const entry: Entry = { key, due, seq: seq++, index: 0 }
        waiting.set(key, entry)
        heap.push(entry)
        if (entry.index === 0) wake()
      } else if (due < existing.due) {
        existing.due = due
        existing.seq = seq++
        heap.up(existing)
        if (existing.index === 0) wake()
      }
    }

    const add = (key: string, after?: Duration.Input): Effect.Effect<void> =>
      Effect.sync(() => {
        if (closed) return
        const delay = after === undefined ? 0 : Math.max(0, Duration.toMillis(after))
        const due = clock.currentTimeMillisUnsafe() + delay
        if (processing.has(key)) {
          const earlier = parked.get(key)
          if (earlier === undefined || due < earlier) parked.set(key, due)
        } else {
          enqueue(key, due)
        }
      })

    const done = (key: string): Effect.Effect<void> =>
      Effect.sync(() => {
        if (!processing.delete(key)) return
        const due = parked.get(key)
        if (due === undefined || closed) return
        parked.delete(key)
        // Due no earlier than now: a key that was just worked on goes behind keys already waiting.
        enqueue(key, Math.max(due, clock.currentTimeMillisUnsafe()))
      })

    type Poll =
      | { readonly _tag: "Key"; readonly key: string; readonly due: number; readonly waitedMillis: number }
      | { readonly _tag: "Wait"; readonly signal: Deferred.Deferred<void>; readonly millis: number | undefined }
      | { readonly _tag: "Closed" }

    /** `waited`: the signal the taker waited on before, which it no longer waits on. */
    const poll = (waited: Deferred.Deferred<void> | undefined): Poll => {
      if (waited !== undefined) {
        waiters.delete(waited)
        if (alarm?.signal === waited) alarm = undefined
      }
      if (closed) return { _tag: "Closed" }
      const head = heap.peek()
      const now = clock.currentTimeMillisUnsafe()
      if (head !== undefined && head.due <= now) {
        heap.pop()
        waiting.delete(head.key)
        processing.add(head.key)
        // The next key, due or not, gets a waiter of its own.
        wake()
        return { _tag: "Key", key: head.key, due: head.due, waitedMillis: now - head.due }
      }
      const signal = Deferred.makeUnsafe<void>()
      waiters.add(signal)
      if (head === undefined || (alarm !== undefined && alarm.at <= head.due)) return { _tag: "Wait", signal, millis: undefined }
      alarm = { signal, at: head.due }
      return { _tag: "Wait", signal, millis: head.due - now }
    }

    /**
     * A waiter interrupted: a wake-up it was given, or the timer it kept, goes to another waiter,
     * so that no due key is left waiting while takers wait.
     */
    const abandon = (signal: Deferred.Deferred<void>): Effect.Effect<void> =>
      Effect.sync(() => {
        let handedOn = !waiters.delete(signal)
        if (alarm?.signal === signal) {
          alarm = undefined
          handedOn = true
        }
        if (handedOn && !closed) wake()
      })

    /** A failing observer loses no key: it goes back at its due time (earlier than any re-add meanwhile). */
    const untake = (key: string, due: number): Effect.Effect<void> =>
      Effect.sync(() => {
        processing.delete(key)
        parked.delete(key)
        if (!closed) enqueue(key, due)
      })

    const wait = (signal: Deferred.Deferred<void>, millis: number | undefined): Effect.Effect<void> =>
      millis === undefined ? Deferred.await(signal) : Effect.raceFirst(Deferred.await(signal), clock.sleep(Duration.millis(millis)))

    /**
     * Only the wait is interruptible. The key is taken off the heap and handed to the caller in
     * one uninterruptible step, so a caller that is itself uninterruptible (runWorkers) cannot be
     * interrupted between receiving a key and registering its `done`.
     */
    const take: Effect.Effect<string> = Effect.uninterruptible(
      Effect.gen(function* () {
        let waited: Deferred.Deferred<void> | undefined
        while (true) {
          const next = poll(waited)
          waited = undefined
          switch (next._tag) {
            case "Key":
              if (observer.onTaken !== undefined) {
                yield* Effect.onError(observer.onTaken(name, next.key, next.waitedMillis), () => untake(next.key, next.due))
              }
              return next.key
            case "Closed":
              return yield* Effect.interrupt
            case "Wait":
              yield* Effect.onInterrupt(Effect.interruptible(wait(next.signal, next.millis)), () => abandon(next.signal))
              waited = next.signal
          }
        }
      })
    )

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        waiting.clear()
        parked.clear()
        heap.clear()
        for (const waiter of waiters) Deferred.doneUnsafe(waiter, Effect.void)
        waiters.clear()
      })
    )

    return {
      add,
      take,
      done,
      // Parked keys count: they are pending work, only held back until their worker finishes.
      size: Effect.sync(() => waiting.size + parked.size)
    }
  })
