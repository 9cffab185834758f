import { describe, expect, it } from "vitest"
import type { PreloadedVerdict } from "../../src/api/kubeletImageVerification.ts"
import type { Condition } from "../../src/api/meta.ts"
import { preloadedVerdicts } from "../../src/controller/imagePullJob/preloadedConditions.ts"
import { PreloadedTally } from "../../src/controller/imagePullJob/preloadedTally.ts"
import { setCondition } from "../../src/controller/status/conditions.ts"

const open = (why = "NeverVerifyPreloadedImages"): PreloadedVerdict => ({ access: "unverified", why })
const checked = (why = "AlwaysVerify"): PreloadedVerdict => ({ access: "reverified", why })
const name = (i: number) => `node-${i}`

/** Decides, then keeps the conditions as the job's status would, for the next decision. */
const decide = (previous: ReadonlyArray<Condition> | undefined, needsCredentials: boolean, tally: PreloadedTally) => {
  const verdicts = preloadedVerdicts('"ghcr.io/acme/app:1"', previous, needsCredentials, tally.summary(name))
  let conditions = previous
  for (const c of verdicts.conditions) conditions = setCondition(conditions, c, "2026-12-01T10:00:00Z")
  return { conditions: conditions ?? [], events: verdicts.events }
}

describe("PreloadedImageUnverified and PreloadedImageReverified", () => {
  it("one Warning as nodes of one policy come, the condition's message steady once it names three", () => {
    const tally = new PreloadedTally(50)
    tally.add(0, open(), true)
    let step = decide(undefined, false, tally)
    expect(step.events).toEqual([
      {
        type: "Warning",
        reason: "PreloadedImageUnverified",
        message: expect.stringContaining("without them on 1 node (node-0): their kubelets do not verify")
      }
    ])
    const messages: Array<string | undefined> = []
    for (let i = 1; i < 50; i++) {
      tally.add(i, open(), true)
      step = decide(step.conditions, false, tally)
      expect(step.events).toEqual([])
      messages.push(step.conditions.find((c) => c.type === "PreloadedImageUnverified")?.message)
    }
    // The message changes while it names fewer than three nodes, and once more to say there are more: then never.
    expect(new Set(messages).size).toBe(3)
    expect(messages.at(-1)).toContain("on node-0, node-1, node-2, ...: ")
  })

  it("a new policy among the nodes is news; one that goes, or a node leaving, turns it False without a Warning", () => {
    const tally = new PreloadedTally(50)
    tally.add(0, checked(), false)
    let step = decide(undefined, false, tally)
    expect(step.events.map((e) => e.reason)).toEqual(["PreloadedImageReverified"])
    tally.add(1, checked("NeverVerifyAllowlistedImages (not allowlisted)"), false)
    step = decide(step.conditions, false, tally)
    expect(step.events.map((e) => e.message)).toEqual([
      expect.stringContaining(
        "on 2 nodes (node-0, node-1): their kubelets verify images they did not pull (kubelet: AlwaysVerify, NeverVerifyAllowlistedImages (not allowlisted))"
      )
    ])
    tally.remove(0, checked(), false)
    tally.remove(1, checked("NeverVerifyAllowlistedImages (not allowlisted)"), false)
    step = decide(step.conditions, false, tally)
    expect(step.events).toEqual([])
    expect(step.conditions.find((c) => c.type === "PreloadedImageReverified")).toMatchObject({
      status: "False",
      reason: "NoNodeVerifiesAtStart"
    })
  })

  it("an image that needs no credentials (no pull secrets, no pull presented any) has no PreloadedImageUnverified", () => {
    const tally = new PreloadedTally(50)
    tally.add(0, open(), false)
    expect(decide(undefined, false, tally)).toEqual({ conditions: [], events: [] })
    expect(decide(undefined, true, tally).events.map((e) => e.reason)).toEqual(["PreloadedImageUnverified"])
    // A node whose policy is unknown counts for neither.
    const unknown = new PreloadedTally(50)
    unknown.add(0, { access: "unknown", why: "policy unknown" }, true)
    expect(decide(undefined, true, unknown)).toEqual({ conditions: [], events: [] })
  })
})
