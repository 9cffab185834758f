/** The AIMD step of a registry's concurrent-pull limit (issue 28, part 3), and the budget that feeds it. */
import { describe, expect, it } from "vitest"
import { decreaseWindowMillis, type LimitSignals, stepPullLimit } from "../../src/controller/imagePullJob/registryPullLimit.ts"
import { RegistryBudget } from "../../src/controller/imagePullJob/registryBudget.ts"

const quiet: LimitSignals = { now: 0, throttled: 0, succeeded: 0, inFlight: 0, held: 0, max: undefined }

describe("stepPullLimit", () => {
  it("sets no limit while nothing throttles", () => {
    expect(stepPullLimit(undefined, { ...quiet, succeeded: 5, inFlight: 8 })).toBeUndefined()
  })

  it("halves what is pulling at the first throttle report, bounded by the flag, never below 1", () => {
    expect(stepPullLimit(undefined, { ...quiet, throttled: 3, inFlight: 10, now: 7 })).toEqual({ limit: 5, loweredAt: 7 })
    expect(stepPullLimit(undefined, { ...quiet, throttled: 1, inFlight: 10, max: 4 })).toEqual({ limit: 2, loweredAt: 0 })
    expect(stepPullLimit(undefined, { ...quiet, throttled: 1, inFlight: 1 })).toEqual({ limit: 1, loweredAt: 0 })
    expect(stepPullLimit({ limit: 1, loweredAt: 0 }, { ...quiet, throttled: 1, now: decreaseWindowMillis })?.limit).toBe(1)
  })

  it("decreases at most once per window: a burst of reports counts once", () => {
    const lowered = { limit: 8, loweredAt: 1000 }
    expect(stepPullLimit(lowered, { ...quiet, throttled: 5, now: 1000 + decreaseWindowMillis - 1 })).toBe(lowered)
    expect(stepPullLimit(lowered, { ...quiet, throttled: 1, now: 1000 + decreaseWindowMillis })).toEqual({
      limit: 4,
      loweredAt: 1000 + decreaseWindowMillis
    })
  })

  it("adds 1/limit per success: a limit's worth of successes adds one", () => {
    const step = (limit: number, succeeded: number) =>
      stepPullLimit({ limit, loweredAt: 0 }, { ...quiet, succeeded, inFlight: 4, held: 20, max: 10 })?.limit
    expect(step(4, 1)).toBe(4.25)
    expect(step(4, 4)).toBe(5)
    expect(step(1, 2)).toBe(2.5)
  })

  it("grows back to the flag's limit and then leaves it to the flag", () => {
    expect(stepPullLimit({ limit: 9.5, loweredAt: 0 }, { ...quiet, succeeded: 5, inFlight: 9, held: 30, max: 10 })).toBeUndefined()
  })

  it("without the flag, goes away once it has grown past everything pulling and waiting", () => {
    const held = { ...quiet, succeeded: 1, inFlight: 3, held: 3 }
    expect(stepPullLimit({ limit: 5, loweredAt: 0 }, held)?.limit).toBe(5.2)
    expect(stepPullLimit({ limit: 5, loweredAt: 0 }, { ...held, held: 0 })).toBeUndefined()
  })
})

describe("RegistryBudget.observe", () => {
  it("steps on each job's new reports only, per registry, and says when a limit went down", () => {
    const budget = new RegistryBudget(undefined)
    budget.settle("default/a", "docker.io", 8, 0)
    budget.settle("default/b", "quay.io", 4, 0)
    expect(budget.observe("default/a", "docker.io", { succeeded: 0, throttleReports: 2 }, 0)).toEqual({
      registry: "docker.io",
      from: undefined,
      to: 4
    })
    expect(budget.room("default/a", "docker.io", 8)).toMatchObject({ limit: 4, room: 0 })
    expect(budget.room("default/b", "quay.io", 4)).toBeUndefined()
    // The same two reports seen again are nothing new, even after the window.
    expect(budget.observe("default/a", "docker.io", { succeeded: 0, throttleReports: 2 }, 60_000)).toBeUndefined()
    expect(budget.limitOf("docker.io")).toBe(4)
    expect(budget.observe("default/a", "docker.io", { succeeded: 0, throttleReports: 3 }, 60_000)).toEqual({
      registry: "docker.io",
      from: 4,
      to: 2
    })
    budget.settle("default/a", "docker.io", 2, 6)
    // Two successes at limit 2: one more.
    expect(budget.observe("default/a", "docker.io", { succeeded: 2, throttleReports: 3 }, 61_000)).toBeUndefined()
    expect(budget.limits()).toEqual(new Map([["docker.io", 3]]))
  })

  it("a job's first look counts the nodes throttled now, not the successes before it", () => {
    const budget = new RegistryBudget(6)
    budget.settle("default/a", "docker.io", 6, 0)
    expect(budget.observe("default/a", "docker.io", { succeeded: 30, throttleReports: 0 }, 0)).toBeUndefined()
    expect(budget.limitOf("docker.io")).toBe(6)
    expect(budget.observe("default/b", "docker.io", { succeeded: 0, throttleReports: 1 }, 0)).toEqual({
      registry: "docker.io",
      from: 6,
      to: 3
    })
  })

  it("a limit that goes away (no flag) wakes whoever still waits under it", () => {
    const budget = new RegistryBudget(undefined)
    budget.settle("default/a", "docker.io", 4, 0)
    budget.observe("default/a", "docker.io", { succeeded: 0, throttleReports: 1 }, 0)
    expect(budget.limitOf("docker.io")).toBe(2)
    budget.settle("default/a", "docker.io", 1, 0)
    expect(budget.settle("default/b", "docker.io", 0, 1)).toEqual([])
    // Two successes: 2 -> 3, past the one pulling and the one waiting: the limit goes.
    budget.observe("default/a", "docker.io", { succeeded: 2, throttleReports: 1 }, 1000)
    expect(budget.limitOf("docker.io")).toBeUndefined()
    expect(budget.settle("default/a", "docker.io", 0, 0)).toEqual(["default/b"])
  })
})
