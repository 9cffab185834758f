import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import { TagPullPolicy } from "../../src/api/nodeImage.ts"
import { maxInt32, maxInt64 } from "../../src/api/schemaExtras.ts"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { maxTagTtlSeconds, tagPullPolicy } from "../../src/controller/imagePullJob/tagPolicy.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const task: JobTask = { image: "nginx", tag: "1.9.1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [] }

const nodes = (n: number) => Array.from({ length: n }, (_, i) => makeNodeImage(`node-${i}`))

/** A node whose nginx:1.9.1 tag was written by the job and is reported in the given phase. */
const withTag = (
  name: string,
  phase?: "Pulling" | "Succeeded" | "Failed",
  version = 0,
  job = makeJob({ image: "nginx:1.9.1" })
): NodeImage =>
  makeNodeImage(name, {
    images: {
      nginx: {
        tags: [
          {
            tag: "1.9.1",
            version,
            ownerReferences: [owner],
            createdAt: "2026-12-02T10:00:00Z",
            pullPolicy: tagPullPolicy(job.spec, `${jobUid}/${name}`)
          }
        ]
      }
    },
    ...(phase === undefined ? {} : { statuses: { nginx: [{ tag: "1.9.1", phase, version, message: "boom" }] } })
  })

describe("decideImagePullJob", () => {
  it("writes tasks on at most parallelism nodes, in target order", () => {
    const job = makeJob({ image: "nginx:1.9.1", parallelism: 2 })
    const decision = decideImagePullJob({ job, task, targets: nodes(5), stale: [], now: t0, propagateEdits: true })
    expect(decision.writes.map((w) => w.node)).toEqual(["node-0", "node-1"])
    const tag = decision.writes[0]!.entry!.tags[0]!
    expect(tag).toMatchObject({
      tag: "1.9.1",
      version: 0,
      createdAt: "2026-12-02T10:00:00Z",
      ownerReferences: [owner],
      imagePullPolicy: "IfNotPresent",
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 }
    })
    expect(tag.pullPolicy!.ttlSecondsAfterFinished).toBeGreaterThanOrEqual(1800 + 300)
    expect(tag.pullPolicy!.ttlSecondsAfterFinished).toBeLessThanOrEqual(1800 + 600)
    expect(decision.status).toMatchObject({ desired: 5, active: 2, succeeded: 0, failed: 0, message: "job is running, progress 0.0%" })
    expect(decision.events.map((e) => e.reason)).toEqual(["Started"])
  })

  it("counts a tag the daemon has not reported yet as active (SPEC §4.2)", () => {
    const job = makeJob({ image: "nginx:1.9.1", parallelism: 2 })
    const targets = [withTag("a"), withTag("b", "Pulling"), makeNodeImage("c")]
    const decision = decideImagePullJob({ job, task, targets, stale: [], now: t0, propagateEdits: true })
    expect(decision.writes).toEqual([])
    expect(decision.status.active).toBe(2)
  })

  it("hands a freed slot to the next node at once", () => {
    const job = makeJob({ image: "nginx:1.9.1", parallelism: 1 })
    const targets = [withTag("a", "Succeeded"), makeNodeImage("b")]
    const decision = decideImagePullJob({ job, task, targets, stale: [], now: t0, propagateEdits: true })
    expect(decision.writes.map((w) => w.node)).toEqual(["b"])
    expect(decision.status).toMatchObject({ active: 1, succeeded: 1, message: "job is running, progress 50.0%" })
  })

  it("resolves a percentage against the desired nodes, rounding up (SPEC §4.4)", () => {
    const job = makeJob({ image: "nginx:1.9.1", parallelism: "25%" })
    expect(decideImagePullJob({ job, task, targets: nodes(10), stale: [], now: t0, propagateEdits: true }).writes).toHaveLength(3)
  })

  it("pauses at parallelism 0", () => {
    const job = makeJob({ image: "nginx:1.9.1", parallelism: 0 })
    const decision = decideImagePullJob({ job, task, targets: nodes(3), stale: [], now: t0, propagateEdits: true })
    expect(decision.writes).toEqual([])
    expect(decision.status.message).toBe("job is paused, progress 0.0%")
  })

  it("completes an Always job when every node finished, listing failed nodes sorted", () => {
    const job = makeJob({ image: "nginx:1.9.1", parallelism: 3 }, { status: { startTime: "2026-12-02T09:00:00Z" } })
    const targets = [withTag("c", "Failed"), withTag("a", "Succeeded"), withTag("b", "Failed")]
    const decision = decideImagePullJob({ job, task, targets, stale: [], now: t0, propagateEdits: true })
    expect(decision.status).toMatchObject({
      completionTime: "2026-12-02T10:00:00Z",
      desired: 3,
      active: 0,
      succeeded: 1,
      failed: 2,
      failedNodes: ["b", "c"],
      message: "job has completed"
    })
    expect(decision.events.map((e) => e.reason)).toEqual(["NodeFailed", "NodeFailed", "Completed"])
    expect(decision.status.conditions?.find((c) => c.type === "Complete")?.status).toBe("True")
  })

  it("says how far the job got when its succeeded nodes pass a quarter, a half, three quarters and all of them", () => {
    const job = (succeeded: number) =>
      makeJob({ image: "nginx:1.9.1", completionPolicy: { type: "Never" } }, { status: { startTime: "2026-12-02T09:00:00Z", succeeded } })
    const targets = (succeeded: number) => Array.from({ length: 8 }, (_, i) => withTag(`n${i}`, i < succeeded ? "Succeeded" : "Pulling"))
    const events = (before: number, after: number) =>
      decideImagePullJob({ job: job(before), task, targets: targets(after), stale: [], now: t0, propagateEdits: true }).events
    expect(events(1, 2)).toEqual([{ type: "Normal", reason: "Progress", message: "pulled on 2 of 8 nodes (25%)" }])
    expect(events(2, 3)).toEqual([])
    // Several milestones at once: the highest is said.
    expect(events(3, 8)).toEqual([{ type: "Normal", reason: "Progress", message: "pulled on 8 of 8 nodes (100%)" }])
    expect(events(8, 8)).toEqual([])
  })

  it("gives a Progress event the count's own share, not the milestone it passed (issue 38)", () => {
    const job = (succeeded: number) =>
      makeJob({ image: "nginx:1.9.1", completionPolicy: { type: "Never" } }, { status: { startTime: "2026-12-02T09:00:00Z", succeeded } })
    const events = (before: number, after: number, desired: number) => {
      const targets = Array.from({ length: desired }, (_, i) => withTag(`n${i}`, i < after ? "Succeeded" : "Pulling"))
      return decideImagePullJob({ job: job(before), task, targets, stale: [], now: t0, propagateEdits: true }).events
    }
    // 1 of 3 passes 25% but is a third: it reads 33%, never 25% beside a count that is not a quarter.
    expect(events(0, 1, 3)).toEqual([{ type: "Normal", reason: "Progress", message: "pulled on 1 of 3 nodes (33%)" }])
    expect(events(1, 2, 3)).toEqual([{ type: "Normal", reason: "Progress", message: "pulled on 2 of 3 nodes (66%)" }])
    // Floored: past 75% with one node left is not yet 100%.
    expect(events(0, 199, 200)).toEqual([{ type: "Normal", reason: "Progress", message: "pulled on 199 of 200 nodes (99%)" }])
  })

  it("never completes a Never job", () => {
    const job = makeJob({ image: "nginx:1.9.1", completionPolicy: { type: "Never" } })
    const decision = decideImagePullJob({ job, task, targets: [withTag("a", "Succeeded")], stale: [], now: t0, propagateEdits: true })
    expect(decision.status.completionTime).toBeUndefined()
    expect(decision.status.message).toBe("job is running, progress 100.0%")
  })

  it("gives a Never job's tag a daily TTL and a deadline of max(1800, timeout)", () => {
    const job = makeJob({ image: "nginx:1.9.1", completionPolicy: { type: "Never" }, pullPolicy: { timeoutSeconds: 3600 } })
    const policy = decideImagePullJob({ job, task, targets: nodes(1), stale: [], now: t0, propagateEdits: true }).writes[0]!.entry!.tags[0]!
      .pullPolicy!
    expect(policy.activeDeadlineSeconds).toBe(3600)
    expect(Math.abs(policy.ttlSecondsAfterFinished! - 86400)).toBeLessThanOrEqual(600)
  })

  it("spreads tag TTLs over the whole jitter range in steps, the same for a node every time", () => {
    const ttls = (job: ReturnType<typeof makeJob>) =>
      Array.from({ length: 2000 }, (_, i) => tagPullPolicy(job.spec, `${jobUid}/node-${i}`).ttlSecondsAfterFinished!)
    const always = ttls(makeJob({ image: "nginx:1.9.1" }))
    expect(new Set(always)).toEqual(new Set(Array.from({ length: 6 }, (_, i) => 1800 + 300 + 60 * i)))
    const never = ttls(makeJob({ image: "nginx:1.9.1", completionPolicy: { type: "Never" } }))
    expect(new Set(never)).toEqual(new Set(Array.from({ length: 11 }, (_, i) => 86400 - 600 + 120 * i)))
    expect(ttls(makeJob({ image: "nginx:1.9.1" }))).toEqual(always)
  })

  // Issue 24: timeoutSeconds x backoffLimit at their int32 maxima is 2^62, above 2^53.
  it("saturates a tag's derived TTL at the int32 maximum, which the NodeImage schema accepts", () => {
    const huge = { timeoutSeconds: maxInt32, backoffLimit: maxInt32 }
    const fromPull = tagPullPolicy(makeJob({ image: "nginx:1.9.1", pullPolicy: huge }).spec, `${jobUid}/a`)
    expect(fromPull.ttlSecondsAfterFinished).toBe(maxTagTtlSeconds)
    expect(maxTagTtlSeconds).toBe(2 ** 31 - 1)
    const fromDeadline = tagPullPolicy(
      makeJob({ image: "nginx:1.9.1", pullPolicy: huge, completionPolicy: { activeDeadlineSeconds: maxInt64 } }).spec,
      `${jobUid}/a`
    )
    expect(fromDeadline).toMatchObject({ ttlSecondsAfterFinished: maxTagTtlSeconds, activeDeadlineSeconds: maxInt64 })
    const never = tagPullPolicy(
      makeJob({ image: "nginx:1.9.1", pullPolicy: huge, completionPolicy: { type: "Never" } }).spec,
      `${jobUid}/a`
    )
    for (const policy of [fromPull, fromDeadline, never]) {
      expect(Result.isSuccess(Schema.decodeUnknownResult(TagPullPolicy)(policy)), JSON.stringify(policy)).toBe(true)
    }
  })

  it("takes a deadline at the int64 bound as one that never comes (no instant a date could not hold is formatted)", () => {
    const job = makeJob(
      { image: "nginx:1.9.1", completionPolicy: { activeDeadlineSeconds: maxInt64 } },
      { status: { startTime: "2026-12-02T09:40:00Z" } }
    )
    const decision = decideImagePullJob({ job, task, targets: nodes(1), stale: [], now: t0, propagateEdits: true })
    expect(decision.writes).toHaveLength(1)
    expect(decision.status.message).toBe("job is running, progress 0.0%")
    expect(decision.wakeAt).toBeGreaterThan(t0 + 1e15)
  })

  it("fails the unfinished nodes once activeDeadlineSeconds passes", () => {
    const job = makeJob(
      { image: "nginx:1.9.1", parallelism: 1, completionPolicy: { activeDeadlineSeconds: 1200 } },
      { status: { startTime: "2026-12-02T09:40:00Z" } }
    )
    const targets = [withTag("a", "Succeeded", 0, job), withTag("b", "Pulling", 0, job), makeNodeImage("c")]
    const decision = decideImagePullJob({ job, task, targets, stale: [], now: t0, propagateEdits: true })
    expect(decision.writes).toEqual([])
    expect(decision.status).toMatchObject({
      completionTime: "2026-12-02T10:00:00Z",
      succeeded: 1,
      failed: 2,
      failedNodes: ["b", "c"],
      message: "job exceeds activeDeadlineSeconds"
    })
  })

  it("wakes at the deadline while running", () => {
    const job = makeJob(
      { image: "nginx:1.9.1", completionPolicy: { activeDeadlineSeconds: 1200 } },
      { status: { startTime: "2026-12-02T10:00:00Z" } }
    )
    expect(decideImagePullJob({ job, task, targets: nodes(2), stale: [], now: t0, propagateEdits: true }).wakeAt).toBe(t0 + 1_200_000)
  })

  it("deletes a completed job once ttlSecondsAfterFinished passed, and not before", () => {
    const status = { startTime: "2026-12-02T09:00:00Z", completionTime: "2026-12-02T09:55:00Z", desired: 1, succeeded: 1 }
    const job = makeJob({ image: "nginx:1.9.1", completionPolicy: { ttlSecondsAfterFinished: 600 } }, { status })
    const early = decideImagePullJob({ job, task, targets: [], stale: [], now: t0, propagateEdits: true })
    expect(early).toMatchObject({ deleteJob: false, wakeAt: Date.parse("2026-12-02T10:05:00Z"), writes: [] })
    const late = decideImagePullJob({ job, task, targets: [], stale: [], now: t0 + 300_000, propagateEdits: true })
    expect(late.deleteJob).toBe(true)
    expect(late.events.map((e) => e.reason)).toEqual(["DeletedByTTL"])
  })

  it("a finished job edited afterwards keeps its result but observes the new generation", () => {
    const status = {
      startTime: "2026-12-02T09:00:00Z",
      completionTime: "2026-12-02T09:55:00Z",
      desired: 1,
      succeeded: 1,
      observedGeneration: 1
    }
    const job = makeJob({ image: "nginx:1.9.1" }, { status })
    const edited = { ...job, metadata: { ...job.metadata, generation: 2 } }
    const decision = decideImagePullJob({ job: edited, task, targets: [], stale: [], now: t0, propagateEdits: true })
    expect(decision.status).toEqual({ ...job.status, observedGeneration: 2 })
    expect(decision.writes).toEqual([])
  })

  it("joins a tag another job wrote by adding its owner and bumping the version", () => {
    const other = { ...owner, name: "other", uid: "uid-other" }
    const node = makeNodeImage("a", {
      images: { nginx: { tags: [{ tag: "1.9.1", version: 3, ownerReferences: [other] }] } },
      statuses: { nginx: [{ tag: "1.9.1", phase: "Succeeded", version: 3 }] }
    })
    const job = makeJob({ image: "nginx:1.9.1" })
    const [write] = decideImagePullJob({ job, task, targets: [node], stale: [], now: t0, propagateEdits: true }).writes
    expect(write!.entry!.tags).toEqual([expect.objectContaining({ version: 4, ownerReferences: [other, owner] })])
  })

  it("re-adds a tag past the version the daemon last reported, so it is pulled again", () => {
    const node = makeNodeImage("a", { statuses: { nginx: [{ tag: "1.9.1", phase: "Succeeded", version: 7 }] } })
    const job = makeJob({ image: "nginx:1.9.1", completionPolicy: { type: "Never" } })
    const [write] = decideImagePullJob({ job, task, targets: [node], stale: [], now: t0, propagateEdits: true }).writes
    expect(write!.entry!.tags[0]!.version).toBe(8)
  })

  it("propagates an edited timeout to the tags it already wrote, without a new pull (SPEC §4.6)", () => {
    const job = makeJob({ image: "nginx:1.9.1", pullPolicy: { timeoutSeconds: 120 } })
    const [write] = decideImagePullJob({
      job,
      task,
      targets: [withTag("a", "Pulling", 2)],
      stale: [],
      now: t0,
      propagateEdits: true
    }).writes
    expect(write!.entry!.tags[0]).toMatchObject({ version: 2, pullPolicy: { timeoutSeconds: 120 } })
  })

  it("leaves written tags alone when told the spec has not changed", () => {
    const job = makeJob({ image: "nginx:1.9.1", pullPolicy: { timeoutSeconds: 120 } })
    const decision = decideImagePullJob({ job, task, targets: [withTag("a", "Pulling", 2)], stale: [], now: t0, propagateEdits: false })
    expect(decision.writes).toEqual([])
  })

  it("adds the job's secrets to an image entry whose tag and owner exist (SPEC §4.3)", () => {
    const job = makeJob({ image: "nginx:1.9.1" })
    const secretTask = { ...task, pullSecrets: [{ namespace: "preheat-daemon-config", name: "default.reg" }] }
    const node = withTag("a", "Pulling")
    const first = decideImagePullJob({ job, task: secretTask, targets: [node], stale: [], now: t0, propagateEdits: true }).writes[0]!
    expect(first.entry!.pullSecrets).toEqual(secretTask.pullSecrets)
  })

  it("writes nothing for a settled running job", () => {
    const job = makeJob({ image: "nginx:1.9.1", completionPolicy: { type: "Never" } })
    const once = decideImagePullJob({ job, task, targets: nodes(1), stale: [], now: t0, propagateEdits: true })
    const settled = makeNodeImage("node-0", {
      images: { nginx: once.writes[0]!.entry! },
      statuses: { nginx: [{ tag: "1.9.1", phase: "Succeeded", version: 0 }] }
    })
    expect(decideImagePullJob({ job, task, targets: [settled], stale: [], now: t0 + 5000, propagateEdits: true }).writes).toEqual([])
  })

  it("releases a tag the job no longer wants", () => {
    const job = makeJob({ image: "nginx:1.9.1" })
    const left = withTag("gone-from-selector", "Succeeded")
    const decision = decideImagePullJob({ job, task, targets: [], stale: [{ node: left, image: "nginx" }], now: t0, propagateEdits: true })
    expect(decision.writes).toEqual([{ node: "gone-from-selector", image: "nginx", entry: undefined }])
  })
})
