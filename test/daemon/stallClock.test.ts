import { describe, expect, it } from "vitest"
import { parseTimeout } from "../../src/cli/flags.ts"
import type { PullProgress } from "../../src/cri/CriRuntime.ts"
import { stalledDetail } from "../../src/daemon/pullMessages.ts"
import { clockAfter, PullStalled, type StallClock, stallVerdict, stoppedClock } from "../../src/daemon/stallClock.ts"

const Mi = 1024 * 1024
const timeout = 120_000

/** The clock after each report, `[at, progress]`, in order. */
const run = (reports: ReadonlyArray<readonly [number, PullProgress]>): StallClock =>
  reports.reduce((clock, [at, progress]) => clockAfter(clock, progress, at), stoppedClock)

const progress = (bytesDone: number, bytesTotal: number, awaitingBytes?: boolean): PullProgress => ({
  bytesDone,
  bytesTotal,
  percent: bytesTotal === 0 ? 0 : Math.floor((bytesDone * 100) / bytesTotal),
  ...(awaitingBytes === undefined ? {} : { awaitingBytes })
})

describe("the stall clock (--pull-progress-timeout)", () => {
  it("a runtime that shows no byte progress is never stalled", () => {
    const clock = run([
      [0, progress(0, 0)],
      [1_000, progress(0, 0)]
    ])
    expect(stallVerdict(clock, 10 * timeout, timeout)).toEqual({ _tag: "LookAgain", afterMillis: timeout })
  })

  it("bytes awaited and not moving for the timeout: stalled, not a moment before", () => {
    const clock = run([
      [0, progress(0, 0)],
      [50, progress(0, 0, true)],
      [2_000, progress(3 * Mi, 10 * Mi, true)]
    ])
    expect(stallVerdict(clock, 2_000 + timeout - 1, timeout)).toEqual({ _tag: "LookAgain", afterMillis: 1 })
    expect(stallVerdict(clock, 2_000 + timeout, timeout)).toEqual({ _tag: "Stalled" })
  })

  it("a pull that never gets its first byte is stalled too, counted from when the runtime awaits it", () => {
    const clock = run([[50, progress(0, 0, true)]])
    expect(stallVerdict(clock, 50 + timeout, timeout)).toEqual({ _tag: "Stalled" })
  })

  it("every move of the bytes starts the clock again: a slow pull is let finish", () => {
    const reports: Array<readonly [number, PullProgress]> = []
    for (let s = 0; s <= 600; s += 100) reports.push([s * 1000, progress(s * 1000, 600_000, true)])
    const clock = run(reports)
    expect(clock.since).toBe(600_000)
    expect(stallVerdict(clock, 600_000 + timeout - 1, timeout)._tag).toBe("LookAgain")
  })

  it("the total becoming known counts as a move (the manifest came)", () => {
    const clock = run([
      [0, progress(0, 0, true)],
      [100_000, progress(0, 5 * Mi, true)]
    ])
    expect(clock.since).toBe(100_000)
  })

  it("nothing awaited stops the clock: unpacking after the last byte, however long, is no stall", () => {
    const clock = run([
      [0, progress(0, 0, true)],
      [1_000, progress(10 * Mi, 10 * Mi, false)]
    ])
    expect(clock.since).toBeUndefined()
    expect(stallVerdict(clock, 100 * timeout, timeout)._tag).toBe("LookAgain")
  })

  it("bytes awaited again start the clock from zero, not from the last move", () => {
    const clock = run([
      [0, progress(1 * Mi, 10 * Mi, true)],
      [1_000, progress(1 * Mi, 10 * Mi, false)],
      [500_000, progress(1 * Mi, 10 * Mi, true)]
    ])
    expect(clock.since).toBe(500_000)
  })

  it("a reading the runtime could not make (awaitingBytes absent) stops the clock: what cannot be seen is not watched", () => {
    const clock = run([
      [0, progress(1 * Mi, 10 * Mi, true)],
      [1_000, progress(1 * Mi, 10 * Mi)]
    ])
    expect(clock.since).toBeUndefined()
  })

  it("a stopped clock is looked at again one timeout on, which finds a clock started meanwhile in time", () => {
    const stopped = run([[0, progress(0, 0)]])
    expect(stallVerdict(stopped, 0, timeout)).toEqual({ _tag: "LookAgain", afterMillis: timeout })
    const started = clockAfter(stopped, progress(0, 0, true), 30_000)
    expect(stallVerdict(started, timeout, timeout)).toEqual({ _tag: "LookAgain", afterMillis: 30_000 })
  })

  it("the failure says how long, how far the pull came of how much, and the flag", () => {
    const stalled = (bytesDone: number, bytesTotal: number) =>
      stalledDetail(new PullStalled({ image: "app:1", stalledMillis: timeout, bytesDone, bytesTotal }))
    expect(stalled(3.25 * Mi, 48 * Mi)).toBe("pull stalled: no bytes received for 120s, at 3.2Mi of 48Mi (--pull-progress-timeout)")
    expect(stalled(0, 0)).toBe("pull stalled: no bytes received for 120s, before the image's manifest came (--pull-progress-timeout)")
  })
})

describe("--pull-progress-timeout", () => {
  it.each([
    ["2m", 120_000],
    ["90s", 90_000],
    ["1m30s", 90_000],
    ["1.5s", 1_500],
    ["0", 0],
    ["0s", 0]
  ])("%s is %d ms", (text, millis) => {
    expect(parseTimeout(text)).toBe(millis)
  })

  it.each(["", "2", "-1s", "soon", "2 minutes"])("%j is refused", (text) => {
    expect(parseTimeout(text)).toBeUndefined()
  })
})
