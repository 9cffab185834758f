import { describe, expect, it } from "vitest"
import type { ImagePullJob } from "../../src/api/imagePullJob.ts"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import { digestVerdict, mismatchMessage } from "../../src/controller/imagePullJob/digestCondition.ts"
import { DigestTally } from "../../src/controller/imagePullJob/digestTally.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const task: JobTask = { image: "nginx", tag: "latest", owner, imagePullPolicy: "Always", pullSecrets: [] }
const a = `sha256:${"a".repeat(64)}`
const b = `sha256:${"b".repeat(64)}`
const c = `sha256:${"c".repeat(64)}`

/** A node whose nginx:latest tag the job wrote, reported Succeeded with `digest`, or not reported. */
const node = (name: string, digest?: string, version = 0): NodeImage =>
  makeNodeImage(name, {
    images: { nginx: { tags: [{ tag: "latest", version, ownerReferences: [owner], createdAt: "2026-12-02T10:00:00Z" }] } },
    ...(digest === undefined ? {} : { statuses: { nginx: [{ tag: "latest", phase: "Succeeded", version, digest }] } })
  })

const alwaysJob = (extra: { status?: unknown; generation?: number } = {}, spec: Record<string, unknown> = {}): ImagePullJob => {
  const job = makeJob({ image: "nginx:latest", imagePullPolicy: "Always", parallelism: 10, ...spec }, extra)
  return { ...job, metadata: { ...job.metadata, generation: extra.generation ?? 1 } }
}

const decide = (job: ImagePullJob, targets: ReadonlyArray<NodeImage>, jobTask = task) =>
  decideImagePullJob({ job, task: jobTask, targets, stale: [], now: t0, propagateEdits: false })

describe("the digest tally", () => {
  it("counts nodes per digest, most first, naming the first three to report each", () => {
    const names = ["n0", "n1", "n2", "n3", "n4", "n5"]
    const tally = new DigestTally(names.length)
    for (const i of [4, 0, 2, 5]) tally.add(a, i)
    tally.add(b, 1)
    tally.add(b, 3)
    tally.remove(a, 0)
    expect(tally.summary((i) => names[i]!)).toEqual([
      { digest: a, nodes: 3, examples: ["n4", "n2", "n5"] },
      { digest: b, nodes: 2, examples: ["n1", "n3"] }
    ])
    tally.remove(b, 1)
    tally.remove(b, 3)
    tally.remove(b, 3)
    expect(tally.summary((i) => names[i]!).map((d) => d.digest)).toEqual([a])
  })
})

describe("the DigestMismatch condition", () => {
  const two = [
    { digest: b, nodes: 5, examples: ["n1", "n2", "n3"] },
    { digest: a, nodes: 1, examples: ["n9"] }
  ]

  it("names the digests in digest order with a few nodes of each, not the counts", () => {
    expect(mismatchMessage('"nginx:latest"', two)).toBe(
      `"nginx:latest" resolved to 2 digests on the job's nodes (the tag moved during the job): ${a} on n9; ${b} on n1, n2, n3, ...`
    )
  })

  it("bounds the message: five digests named, the rest counted", () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      digest: `sha256:${i.toString(16).padStart(64, "0")}`,
      nodes: 100,
      examples: ["a-node-with-a-long-name-1", "a-node-with-a-long-name-2", "a-node-with-a-long-name-3"]
    }))
    const message = mismatchMessage('"nginx:latest"', many)
    expect(message).toContain("; and 35 more digests")
    expect(message.length).toBeLessThan(1000)
  })

  it("is absent while the nodes agree, True with a Warning when they disagree, False once they agree again", () => {
    expect(digestVerdict("x", undefined, undefined, [two[0]!])).toEqual({ condition: undefined, event: undefined })
    const mismatch = digestVerdict("x", undefined, undefined, two)
    expect(mismatch.condition).toMatchObject({ type: "DigestMismatch", status: "True", reason: "TagMoved" })
    expect(mismatch.event).toMatchObject({ type: "Warning", reason: "DigestMismatch", message: mismatch.condition!.message })
    const conditions = [{ ...mismatch.condition!, lastTransitionTime: "2026-12-02T10:00:00Z" }]
    const agreed = digestVerdict("x", conditions, [{ digest: a, nodes: 1 }], [{ digest: a, nodes: 7, examples: ["n1"] }])
    expect(agreed.condition).toMatchObject({ type: "DigestMismatch", status: "False", reason: "OneDigest" })
    expect(agreed.condition!.message).toContain(a)
    expect(agreed.event).toBeUndefined()
  })

  it("warns once per set of digests: not again when only counts or named nodes change", () => {
    const first = digestVerdict("x", undefined, undefined, two)
    const conditions = [{ ...first.condition!, lastTransitionTime: "2026-12-02T10:00:00Z" }]
    const previous = two.map(({ digest, nodes }) => ({ digest, nodes }))
    const more = [
      { digest: b, nodes: 9, examples: ["n1", "n2", "n3"] },
      { digest: a, nodes: 2, examples: ["n9", "n8"] }
    ]
    expect(digestVerdict("x", conditions, previous, more).event).toBeUndefined()
    const third = [...more, { digest: c, nodes: 1, examples: ["n7"] }]
    expect(digestVerdict("x", conditions, previous, third).event?.message).toContain(c)
  })
})

describe("decideImagePullJob and digests", () => {
  it("lists the digests its nodes resolved and sets DigestMismatch with a Warning when there are two", () => {
    const targets = [node("n1", a), node("n2", b), node("n3", a), node("n4")]
    const decision = decide(alwaysJob(), targets)
    expect(decision.status.imageDigests).toEqual([
      { digest: a, nodes: 2 },
      { digest: b, nodes: 1 }
    ])
    const condition = decision.status.conditions?.find((c) => c.type === "DigestMismatch")
    expect(condition).toMatchObject({ status: "True", reason: "TagMoved" })
    expect(condition?.message).toContain(`${a} on n1, n3`)
    expect(condition?.message).toContain(`${b} on n2`)
    expect(decision.events.filter((e) => e.reason === "DigestMismatch")).toHaveLength(1)
  })

  it("carries no DigestMismatch while one digest was resolved, and no imageDigests before any", () => {
    expect(decide(alwaysJob(), [node("n1"), node("n2")]).status.imageDigests).toBeUndefined()
    const decision = decide(alwaysJob(), [node("n1", a), node("n2", a)])
    expect(decision.status.imageDigests).toEqual([{ digest: a, nodes: 2 }])
    expect(decision.status.conditions?.map((c) => c.type)).not.toContain("DigestMismatch")
  })

  it("a new generation of an Always job lets go of every node's tag, so that each pulls again within parallelism", () => {
    const targets = [node("n1", a), node("n2", b), node("n3")]
    const first = decide(alwaysJob({ generation: 1 }), targets)
    const job = alwaysJob({ status: first.status, generation: 2 })
    const decision = decide(job, targets)
    expect(decision.writes.map((w) => [w.node, w.entry])).toEqual([
      ["n1", undefined],
      ["n2", undefined],
      ["n3", undefined]
    ])
    expect(decision.status).toMatchObject({ active: 0, succeeded: 0, failed: 0, observedGeneration: 2 })
    expect(decision.status.imageDigests).toBeUndefined()
    expect(decision.status.conditions?.find((c) => c.type === "DigestMismatch")).toMatchObject({ status: "False" })
    expect(decision.events.map((e) => e.reason)).toContain("Repulling")
    // The same generation again: nothing more is released.
    expect(decide(alwaysJob({ status: decision.status, generation: 2 }), targets).writes).toEqual([])
  })

  it("the released nodes get the tag again at a version past the one reported: the daemon pulls it again", () => {
    const released = makeNodeImage("n1", { statuses: { nginx: [{ tag: "latest", phase: "Succeeded", version: 0, digest: a }] } })
    const job = alwaysJob({ status: { observedGeneration: 2, startTime: "2026-12-02T10:00:00Z" }, generation: 2 })
    const decision = decide(job, [released])
    expect(decision.writes[0]?.entry?.tags[0]).toMatchObject({ tag: "latest", version: 1, imagePullPolicy: "Always" })
  })

  it("reopens a finished Always job on a new generation, its Complete condition False until it ends again", () => {
    const targets = [node("n1", a), node("n2", b)]
    const done = decide(alwaysJob(), targets)
    expect(done.status.completionTime).toBeDefined()
    const decision = decide(alwaysJob({ status: done.status, generation: 2 }), targets)
    expect(decision.status.completionTime).toBeUndefined()
    expect(decision.status.conditions?.find((c) => c.type === "Complete")).toMatchObject({ status: "False", reason: "Repulling" })
    expect(decision.writes).toHaveLength(2)
  })

  it("an IfNotPresent job keeps its nodes' tags on a new generation (nothing to pull again)", () => {
    const targets = [node("n1", a), node("n2", b)]
    const ifNotPresent = { ...task, imagePullPolicy: "IfNotPresent" as const }
    const first = decide(alwaysJob({}, { imagePullPolicy: "IfNotPresent", completionPolicy: { type: "Never" } }), targets, ifNotPresent)
    const job = alwaysJob({ status: first.status, generation: 2 }, { imagePullPolicy: "IfNotPresent", completionPolicy: { type: "Never" } })
    expect(decide(job, targets, ifNotPresent).writes).toEqual([])
  })
})
