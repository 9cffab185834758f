import { describe, expect, it } from "vitest"
import { combinedPrefix, defaultCorrelatorOptions, makeEventCorrelator } from "../../src/kube/eventCorrelation.ts"
import type { Correlation, EventCorrelator, EventFacts } from "../../src/kube/eventCorrelation.ts"

const job = { apiVersion: "apps.kruise.io/v1beta1", kind: "ImagePullJob", namespace: "apps", name: "warm", uid: "uid-1" }
const failed = (message: string, involved: EventFacts["involved"] = job): EventFacts => ({
  component: "preheat-daemon",
  involved,
  type: "Warning",
  reason: "PullImageFailed",
  message
})

/** Correlates and, as the recorder does once the API server answered, records what a Create or Patch wrote. */
const send = (correlator: EventCorrelator, facts: EventFacts, now: number): Correlation => {
  const decision = correlator.correlate(facts, now)
  if (decision._tag === "Create")
    correlator.recorded(decision.key, { name: `e${now}`, namespace: "apps", count: 1, firstTimestamp: `t${now}` })
  if (decision._tag === "Patch") {
    correlator.recorded(decision.key, {
      name: decision.name,
      namespace: decision.namespace,
      count: decision.count,
      firstTimestamp: decision.firstTimestamp
    })
  }
  return decision
}

describe("event correlation (client-go's EventCorrelator)", () => {
  it("an identical event is a patch of the first one's count, which keeps its name and firstTimestamp", () => {
    const correlator = makeEventCorrelator()
    expect(send(correlator, failed("manifest unknown"), 1000)).toMatchObject({ _tag: "Create", message: "manifest unknown" })
    expect(send(correlator, failed("manifest unknown"), 2000)).toMatchObject({
      _tag: "Patch",
      name: "e1000",
      namespace: "apps",
      count: 2,
      firstTimestamp: "t1000",
      message: "manifest unknown"
    })
    expect(send(correlator, failed("manifest unknown"), 3000)).toMatchObject({ _tag: "Patch", name: "e1000", count: 3 })
    // Another message, type, reason or object is an Event of its own.
    expect(send(correlator, failed("timeout"), 4000)._tag).toBe("Create")
    expect(send(correlator, { ...failed("manifest unknown"), reason: "Other" }, 4000)._tag).toBe("Create")
    expect(send(correlator, failed("manifest unknown", { ...job, name: "other" }), 4000)._tag).toBe("Create")
  })

  it("an event not yet recorded by the API server is created, not patched", () => {
    const correlator = makeEventCorrelator()
    expect(correlator.correlate(failed("x"), 0)._tag).toBe("Create")
    expect(correlator.correlate(failed("x"), 0)._tag).toBe("Create")
  })

  it("from the 10th distinct message of similar events within 10 minutes, one combined Event counts them", () => {
    const correlator = makeEventCorrelator()
    for (let i = 1; i <= 9; i++)
      expect(send(correlator, failed(`node-${i}`), i * 1000)).toMatchObject({ _tag: "Create", message: `node-${i}` })
    expect(send(correlator, failed("node-10"), 10_000)).toMatchObject({ _tag: "Create", message: `${combinedPrefix}node-10` })
    expect(send(correlator, failed("node-11"), 11_000)).toMatchObject({
      _tag: "Patch",
      name: "e10000",
      count: 2,
      message: `${combinedPrefix}node-11`
    })
    // A message seen before the threshold is combined too: the set stays at the threshold.
    expect(send(correlator, failed("node-12"), 12_000)).toMatchObject({ _tag: "Patch", count: 3 })
  })

  it("similar events more than 10 minutes after the last one start counting anew", () => {
    const correlator = makeEventCorrelator()
    for (let i = 1; i <= 9; i++) send(correlator, failed(`node-${i}`), i)
    const later = 9 + defaultCorrelatorOptions.aggregateIntervalMillis + 1
    expect(send(correlator, failed("node-10"), later)).toMatchObject({ _tag: "Create", message: "node-10" })
  })

  it("a component gets a burst of 25 events about one object, then one every 5 minutes; the skipped ones count in the next", () => {
    const correlator = makeEventCorrelator()
    const decisions = Array.from({ length: 30 }, () => send(correlator, failed("same"), 0)._tag)
    expect(decisions).toEqual(["Create", ...Array<string>(24).fill("Patch"), ...Array<string>(5).fill("Skip")])
    // Another object, or another type about the same object, has its own bucket.
    expect(send(correlator, failed("same", { ...job, name: "other" }), 0)._tag).toBe("Create")
    expect(send(correlator, { ...failed("same"), type: "Normal" }, 0)._tag).toBe("Create")
    expect(send(correlator, failed("same"), 299_000)._tag).toBe("Skip")
    // 300 s refill one token; the patch's count includes the six refused occurrences.
    expect(send(correlator, failed("same"), 300_000)).toMatchObject({ _tag: "Patch", count: 32 })
    expect(send(correlator, failed("same"), 300_001)._tag).toBe("Skip")
  })
})
