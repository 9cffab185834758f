// Issue 24: the controller's events quote what users wrote (Go's %q) and cut it to a bound, and
// escape the words it repeats from a NodeImage status, which anyone who may edit NodeImages can write.
import { describe, expect, it } from "vitest"
import { maxQuotedCharacters } from "../../src/api/goQuote.ts"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import { maxConditionMessageLength, setCondition } from "../../src/controller/status/conditions.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { tagPullPolicy } from "../../src/controller/imagePullJob/tagPolicy.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"
import { rawControls } from "../support/hostileText.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }

describe("controller events quote and bound what users wrote", () => {
  it("a long reference is cut in the Started event", () => {
    // Valid for the decoder (a 251-character name, a 128-character tag), longer than the bound.
    const image = `registry.example.com/${"a".repeat(230)}:${"t".repeat(128)}`
    const job = makeJob({ image })
    const task: JobTask = {
      image: `registry.example.com/${"a".repeat(230)}`,
      tag: "t".repeat(128),
      owner,
      imagePullPolicy: "IfNotPresent",
      pullSecrets: []
    }
    const decision = decideImagePullJob({ job, task, targets: [makeNodeImage("node-0")], stale: [], now: t0, propagateEdits: true })
    const started = decision.events.find((e) => e.reason === "Started")
    expect(started?.message).toBe(`pulling "${image.slice(0, maxQuotedCharacters)}"... on 1 nodes`)
  })

  it("a hand-written failure message in a NodeImage status is escaped in the NodeFailed event", () => {
    const job = makeJob({ image: "nginx:1.9.1" }, { status: { startTime: "2026-12-02T09:00:00Z" } })
    const task: JobTask = { image: "nginx", tag: "1.9.1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [] }
    const node = makeNodeImage("node-0", {
      images: {
        nginx: {
          tags: [
            {
              tag: "1.9.1",
              version: 0,
              ownerReferences: [owner],
              createdAt: "2026-12-02T10:00:00Z",
              pullPolicy: tagPullPolicy(job.spec, `${jobUid}/node-0`)
            }
          ]
        }
      },
      statuses: { nginx: [{ tag: "1.9.1", phase: "Failed", version: 0, message: "boom\x1b]0;pwned\x07\u202e" }] }
    })
    const decision = decideImagePullJob({ job, task, targets: [node], stale: [], now: t0, propagateEdits: true })
    const failed = decision.events.find((e) => e.reason === "NodeFailed")
    expect(failed?.message).toBe("node node-0: boom\\x1b]0;pwned\\a\\u202e")
    expect(rawControls(failed?.message ?? "")).toEqual([])
  })

  it("a condition's message is escaped and bounded, whoever built it", () => {
    const [condition] = setCondition(
      undefined,
      { type: "Valid", status: "False", reason: "Invalid", message: `bad\x1b]0;pwned\x07\u202e${"x".repeat(40_000)}` },
      "2026-12-02T10:00:00Z"
    )
    expect(condition?.message?.startsWith("bad\\x1b]0;pwned\\a\\u202exxx")).toBe(true)
    expect(condition?.message?.length).toBe(maxConditionMessageLength)
  })
})
