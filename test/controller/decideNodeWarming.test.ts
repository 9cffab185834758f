// The pure decisions of the warm gate (issue 27): which jobs must warm a node, where each stands
// on it, and when its startup taint is lifted.
import { describe, expect, it } from "vitest"
import type { ImagePullJob } from "../../src/api/imagePullJob.ts"
import { decideWarming, notWarmedText } from "../../src/controller/nodeWarming/decide.ts"
import { gatesOf, mustWarm, warmNodesAnnotation, warmState } from "../../src/controller/nodeWarming/gates.ts"
import type { Gate } from "../../src/controller/nodeWarming/gates.ts"
import { carriesWarmTaint, removeWarmTaint } from "../../src/api/warmTaint.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"

const never = { type: "Never" }
const annotated = (job: ImagePullJob, value = "true"): ImagePullJob => ({
  ...job,
  metadata: { ...job.metadata, annotations: { [warmNodesAnnotation]: value } }
})
const finished = { startTime: "2026-12-04T10:00:00Z", completionTime: "2026-12-04T10:01:00Z" }

describe("mustWarm: the jobs that gate a node", () => {
  it("a Never job gates the nodes it selects by name, labels or as every node", () => {
    expect(mustWarm(makeJob({ image: "nginx:1", completionPolicy: never }), "n1", {})).toBe(true)
    expect(mustWarm(makeJob({ image: "nginx:1", completionPolicy: never, selector: { names: ["n2"] } }), "n1", {})).toBe(false)
    expect(mustWarm(makeJob({ image: "nginx:1", completionPolicy: never, selector: { names: ["n1"] } }), "n1", {})).toBe(true)
    const gpu = makeJob({ image: "nginx:1", completionPolicy: never, selector: { matchLabels: { pool: "gpu" } } })
    expect(mustWarm(gpu, "n1", { pool: "gpu" })).toBe(true)
    expect(mustWarm(gpu, "n1", { pool: "general" })).toBe(false)
  })

  it('an Always job gates only when annotated warm-nodes: "true", and only until it finished', () => {
    const always = makeJob({ image: "nginx:1" })
    expect(mustWarm(always, "n1", {})).toBe(false)
    expect(mustWarm(annotated(always), "n1", {})).toBe(true)
    expect(mustWarm(annotated(always, "yes"), "n1", {})).toBe(false)
    expect(mustWarm(annotated(makeJob({ image: "nginx:1" }, { status: finished })), "n1", {})).toBe(false)
  })

  it("a podSelector job selects nodes by their pods, which a held node has none of: it gates nothing", () => {
    const byPods = makeJob({ image: "nginx:1", completionPolicy: never, podSelector: { matchLabels: { app: "web" } } })
    expect(mustWarm(byPods, "n1", {})).toBe(false)
  })

  it("a paused job (parallelism 0) or one the controller refuses (Valid=False) gates nothing: it gives the node no task", () => {
    expect(mustWarm(makeJob({ image: "nginx:1", completionPolicy: never, parallelism: 0 }), "n1", {})).toBe(false)
    expect(mustWarm(makeJob({ image: "nginx:1", completionPolicy: never, parallelism: "0%" }), "n1", {})).toBe(false)
    const refused = {
      conditions: [{ type: "Valid", status: "False", reason: "PullSecretMissing", lastTransitionTime: "2026-12-04T10:00:00Z" }]
    }
    expect(mustWarm(makeJob({ image: "nginx:1", completionPolicy: never }, { status: refused }), "n1", {})).toBe(false)
  })

  it("a job being deleted gates nothing", () => {
    const job = makeJob({ image: "nginx:1", completionPolicy: never })
    expect(mustWarm({ ...job, metadata: { ...job.metadata, deletionTimestamp: "2026-12-04T10:00:00Z" } }, "n1", {})).toBe(false)
  })
})

const owner = { apiVersion: "apps.kruise.io/v1beta1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const withTag = (phase: string | undefined, extra: Record<string, unknown> = {}) =>
  makeNodeImage("n1", {
    images: { nginx: { tags: [{ tag: "1", version: 2, ownerReferences: [owner] }] } },
    ...(phase === undefined ? {} : { statuses: { nginx: [{ tag: "1", version: 2, phase, ...extra }] } })
  })

describe("warmState: where a job stands on the node, by its own tag", () => {
  const job = makeJob({ image: "nginx:1", completionPolicy: never })

  it("pending without a NodeImage, without the job's tag, or while the tag pulls", () => {
    expect(warmState(job, undefined)).toEqual({ phase: "pending", why: "node has no NodeImage yet" })
    expect(warmState(job, makeNodeImage("n1"))).toEqual({ phase: "pending", why: "not yet given to the node" })
    expect(warmState(job, withTag(undefined))).toEqual({ phase: "pending", why: "waiting to pull" })
    expect(warmState(job, withTag("Pulling", { progress: 40 }))).toEqual({ phase: "pending", why: "pulling 40%" })
  })

  it("succeeded or failed as the daemon reported the tag's current version", () => {
    expect(warmState(job, withTag("Succeeded"))).toEqual({ phase: "succeeded" })
    expect(warmState(job, withTag("Failed", { message: "not found" }))).toEqual({ phase: "failed", why: "not found" })
  })

  it("another job's tag of the same image, or an older version's report, is not this job's success", () => {
    const other = makeJob({ image: "nginx:1", completionPolicy: never }, { uid: "someone-else" })
    expect(warmState(other, withTag("Succeeded")).phase).toBe("pending")
    const stale = makeNodeImage("n1", {
      images: { nginx: { tags: [{ tag: "1", version: 3, ownerReferences: [owner] }] } },
      statuses: { nginx: [{ tag: "1", version: 2, phase: "Succeeded" }] }
    })
    expect(warmState(job, stale).phase).toBe("pending")
  })

  it("gatesOf lists the node's gates in job order with their states", () => {
    const second = { ...job, metadata: { ...job.metadata, name: "a-job" } }
    const unrelated = makeJob({ image: "busybox:1" })
    expect(gatesOf({ name: "n1", labels: {} }, [job, unrelated, second], withTag("Succeeded"))).toEqual([
      { job: "default/a-job", image: "nginx:1", state: { phase: "succeeded" } },
      { job: "default/job-1", image: "nginx:1", state: { phase: "succeeded" } }
    ])
  })
})

const t0 = Date.parse("2026-12-04T10:00:00Z")
const gate = (state: Gate["state"], job = "default/j"): Gate => ({ job, image: "nginx:1", state })
const pulling = gate({ phase: "pending", why: "pulling 10%" })
const done = gate({ phase: "succeeded" }, "default/done")

describe("decideWarming: when the taint goes", () => {
  const base = { tainted: true, firstSeen: t0, now: t0 + 1000, timeoutMs: 600_000 }

  it("holds while a gate is pending, until the timeout from the first sighting", () => {
    expect(decideWarming({ ...base, gates: [pulling, done] })).toEqual({ action: "hold", firstSeen: t0, wakeAt: t0 + 600_000 })
    expect(decideWarming({ ...base, firstSeen: undefined, gates: [pulling] })).toEqual({
      action: "hold",
      firstSeen: t0 + 1000,
      wakeAt: t0 + 601_000
    })
  })

  it("releases as warmed once every gate succeeded, and at once when no job must warm the node", () => {
    expect(decideWarming({ ...base, gates: [done] })).toMatchObject({ action: "release", outcome: "warmed", notWarmed: [], warmed: [done] })
    expect(decideWarming({ ...base, gates: [] })).toMatchObject({ action: "release", outcome: "warmed" })
  })

  it("releases at once when a warming pull failed, naming what was not warmed", () => {
    const failed = gate({ phase: "failed", why: "not found" }, "default/bad")
    const decision = decideWarming({ ...base, gates: [pulling, failed, done] })
    expect(decision).toMatchObject({ action: "release", outcome: "failed", notWarmed: [pulling, failed], warmed: [done] })
    expect(notWarmedText([pulling, failed])).toBe("job default/j image nginx:1 (pulling 10%); job default/bad image nginx:1 (not found)")
  })

  it("releases at the timeout whatever is still pulling: never held forever", () => {
    expect(decideWarming({ ...base, now: t0 + 599_999, gates: [pulling] }).action).toBe("hold")
    expect(decideWarming({ ...base, now: t0 + 600_000, gates: [pulling] })).toMatchObject({
      action: "release",
      outcome: "timeout",
      notWarmed: [pulling]
    })
  })

  it("does nothing for a node without the taint", () => {
    expect(decideWarming({ ...base, tainted: false, gates: [pulling] })).toEqual({ action: "none" })
  })
})

describe("the taint: only preheat's own, removed with a conditional write", () => {
  const key = "preheat.kruise.io/warming"
  const node = (taints: ReadonlyArray<unknown>): KubeObject => ({ metadata: { name: "n1" }, spec: { taints } })
  const ours = { key, effect: "NoSchedule" }
  const others = [{ key, effect: "NoExecute" }, { key: "gpu", value: "true", effect: "NoSchedule" }, "not a taint"]

  it("preheat's taint is its key with effect NoSchedule, nothing else", () => {
    expect(carriesWarmTaint(node([ours]), key)).toBe(true)
    expect(carriesWarmTaint(node(others), key)).toBe(false)
    expect(carriesWarmTaint({ metadata: { name: "n1" } }, key)).toBe(false)
  })

  it("the patch tests the taints read and keeps every other one", () => {
    const taints = [others[0], ours, others[1], others[2]]
    expect(removeWarmTaint(node(taints), key)).toEqual([
      { op: "test", path: "/spec/taints", value: taints },
      { op: "replace", path: "/spec/taints", value: others }
    ])
  })
})
