import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeImageListPullJob, decodeImagePullJob } from "../../src/api/decode.ts"
import type { ImageListPullJob } from "../../src/api/imageListPullJob.ts"
import type { ImagePullJob } from "../../src/api/imagePullJob.ts"
import { decideImageListPullJob, templateHashLabel } from "../../src/controller/imageListPullJob/decide.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")

const listJob = (spec: Record<string, unknown>, status?: unknown): ImageListPullJob => {
  const r = decodeImageListPullJob({
    metadata: { name: "list", namespace: "ns", uid: "list-uid", labels: { team: "a" } },
    spec,
    ...(status === undefined ? {} : { status })
  })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

/** The children a decision asked for, as the API server would hand them back. */
const created = (objects: ReadonlyArray<unknown>, status?: unknown): Array<ImagePullJob> =>
  objects.map((o) => {
    const r = decodeImagePullJob(status === undefined ? o : { ...(o as object), status })
    if (Result.isFailure(r)) throw new Error(r.failure.message)
    return r.success
  })

describe("decideImageListPullJob", () => {
  it("creates one owned child per image with the shared template", () => {
    const job = listJob({ images: ["nginx:1.9.1", "busybox:1.29.2"], parallelism: 10 })
    const decision = decideImageListPullJob(job, [], t0)
    expect(decision.create).toHaveLength(2)
    const [first] = decision.create
    expect(first).toMatchObject({
      kind: "ImagePullJob",
      metadata: {
        namespace: "ns",
        labels: { team: "a" },
        ownerReferences: [{ kind: "ImageListPullJob", name: "list", uid: "list-uid", controller: true }]
      },
      spec: { image: "nginx:1.9.1", parallelism: 10 }
    })
    expect(first!.metadata.name).toMatch(/^list-[a-z0-9]+$/)
    // As upstream: a child counts once it has started; none has yet.
    expect(decision.status).toMatchObject({ desired: 2, active: 0, completed: 0, succeeded: 0 })
    expect(decision.events.map((e) => e.reason)).toEqual(["CreatedImagePullJob", "CreatedImagePullJob"])
  })

  it("names children stably, so a retried create finds the earlier one", () => {
    const job = listJob({ images: ["nginx"] })
    expect(decideImageListPullJob(job, [], t0).create[0]!.metadata.name).toBe(
      decideImageListPullJob(job, [], t0 + 1000).create[0]!.metadata.name
    )
  })

  it("deletes the child of a removed image and creates the added one", () => {
    const before = listJob({ images: ["a", "b"] })
    const children = created(decideImageListPullJob(before, [], t0).create)
    const after = listJob({ images: ["b", "c"] })
    const decision = decideImageListPullJob(after, children, t0)
    expect(decision.delete).toEqual([children[0]!.metadata.name])
    expect(decision.create.map((c) => (c["spec"] as { image: string }).image)).toEqual(["c"])
  })

  it("replaces every child when the template changes", () => {
    const before = listJob({ images: ["a"], pullPolicy: { timeoutSeconds: 300 } })
    const children = created(decideImageListPullJob(before, [], t0).create)
    const after = listJob({ images: ["a"], pullPolicy: { timeoutSeconds: 100 } })
    const decision = decideImageListPullJob(after, children, t0)
    expect(decision.delete).toEqual([children[0]!.metadata.name])
    expect(decision.create[0]!.metadata.name).not.toBe(children[0]!.metadata.name)
    expect(decision.create[0]!.metadata.labels?.[templateHashLabel]).not.toBe(children[0]!.metadata.labels?.[templateHashLabel])
  })

  // A child as OpenKruise's controller makes it (upstream pkg/controller/imagelistpulljob/
  // imagelistpulljob_controller.go newImagePullJobs): generateName `LIST-`, its own template hash
  // label, a controller reference, and the template copied with the image (issue 26 item 5).
  const upstreamChild = (image: string, spec: Record<string, unknown>): ImagePullJob =>
    created([
      {
        apiVersion: "apps.kruise.io/v1beta1",
        kind: "ImagePullJob",
        metadata: {
          name: `list-${image.replace(/[^a-z0-9]/g, "")}x7k2p`,
          namespace: "ns",
          uid: `${image}-uid`,
          labels: { "controller-revision-hash": "5c7d8b9f4" },
          ownerReferences: [
            { apiVersion: "apps.kruise.io/v1beta1", kind: "ImageListPullJob", name: "list", uid: "list-uid", controller: true }
          ]
        },
        spec: { ...spec, image }
      }
    ])[0]!

  it("keeps the children OpenKruise made from the same template, and replaces those of another", () => {
    const template = {
      parallelism: 2,
      completionPolicy: { type: "Always", activeDeadlineSeconds: 1200 },
      pullPolicy: { timeoutSeconds: 300 }
    }
    const job = listJob({ images: ["a", "b"], ...template })
    const kept = decideImageListPullJob(job, [upstreamChild("a", template), upstreamChild("b", template)], t0)
    expect(kept.create).toEqual([])
    expect(kept.delete).toEqual([])
    const stale = upstreamChild("b", { ...template, parallelism: 5 })
    const replaced = decideImageListPullJob(job, [upstreamChild("a", template), stale], t0)
    expect(replaced.delete).toEqual([stale.metadata.name])
    expect(replaced.create.map((c) => (c["spec"] as { image: string }).image)).toEqual(["b"])
  })

  // Issue 26: the deprecated spelling is read into upstream's; respelling it is no template change.
  it("children spell the deprecated pullPolicy.type as imagePullPolicy; respelling it keeps them", () => {
    const seed = listJob({ images: ["a"], pullPolicy: { type: "Always", timeoutSeconds: 300 } })
    const children = created(decideImageListPullJob(seed, [], t0).create)
    expect(children[0]!.spec).toMatchObject({ imagePullPolicy: "Always", pullPolicy: { timeoutSeconds: 300, backoffLimit: 3 } })
    expect(children[0]!.spec.pullPolicy).not.toHaveProperty("type")
    // Written first: the decoded spec has it last whatever the order written.
    const respelt = listJob({ imagePullPolicy: "Always", images: ["a"], pullPolicy: { timeoutSeconds: 300 } })
    expect(decideImageListPullJob(respelt, children, t0)).toMatchObject({ create: [], delete: [] })
  })

  it("aggregates the children and completes when all completed, listing failures sorted", () => {
    const job = listJob({ images: ["b", "a"], completionPolicy: { ttlSecondsAfterFinished: 60 } })
    const children = created(decideImageListPullJob(job, [], t0).create, {
      startTime: "2026-12-02T09:58:00Z",
      completionTime: "2026-12-02T09:59:00Z",
      desired: 3,
      succeeded: 2,
      failed: 1,
      failedNodes: ["node-2"]
    })
    const decision = decideImageListPullJob(job, children, t0)
    expect(decision.status).toMatchObject({
      completionTime: "2026-12-02T10:00:00Z",
      desired: 2,
      active: 0,
      completed: 2,
      succeeded: 0,
      failedImageStatuses: [
        { name: "a", message: "failed on 1 nodes: node-2" },
        { name: "b", message: "failed on 1 nodes: node-2" }
      ]
    })
    expect(decision.wakeAt).toBe(t0 + 60_000)
  })

  it("counts Never children as upstream: completed when every node finished, succeeded when every one succeeded", () => {
    const job = listJob({ images: ["a", "b", "c"], completionPolicy: { type: "Never" } })
    const [a, b, c] = created(decideImageListPullJob(job, [], t0).create)
    const withStatus = (child: ImagePullJob, status: Record<string, unknown>) =>
      created([child], { startTime: "2026-12-02T09:58:00Z", ...status })[0]!
    const children = [
      withStatus(a!, { desired: 3, succeeded: 3, failed: 0, active: 0 }),
      withStatus(b!, { desired: 3, succeeded: 2, failed: 1, active: 0, failedNodes: ["node-2"] }),
      withStatus(c!, { desired: 3, succeeded: 1, failed: 0, active: 1 })
    ]
    const decision = decideImageListPullJob(job, children, t0)
    expect(decision.status).toMatchObject({ desired: 3, active: 1, completed: 2, succeeded: 1 })
    // A Never list job never completes.
    expect(decision.status.completionTime).toBeUndefined()
  })

  it("a finished job edited afterwards keeps its result but observes the new generation", () => {
    const finished = { completionTime: "2026-12-02T09:58:00Z", desired: 1, completed: 1, succeeded: 1, observedGeneration: 1 }
    const job = listJob({ images: ["a"] }, finished)
    const edited = { ...job, metadata: { ...job.metadata, generation: 2 } }
    expect(decideImageListPullJob(edited, [], t0).status).toEqual({ ...job.status, observedGeneration: 2 })
  })

  it("deletes itself after its TTL", () => {
    const job = listJob({ images: ["a"], completionPolicy: { ttlSecondsAfterFinished: 60 } }, { completionTime: "2026-12-02T09:58:00Z" })
    expect(decideImageListPullJob(job, [], t0).deleteJob).toBe(true)
  })
})

describe("decideImageListPullJob: digests", () => {
  const mismatch = { type: "DigestMismatch", status: "True" as const, reason: "TagMoved", lastTransitionTime: "2026-12-02T09:59:00Z" }
  const running = { startTime: "2026-12-02T09:58:00Z", desired: 3, active: 1, succeeded: 2 }

  it("is DigestMismatch while a child's nodes disagree, naming its image, with one Warning; False once they agree", () => {
    const job = listJob({ images: ["b:latest", "a:latest"], completionPolicy: { type: "Never" } })
    const fresh = created(decideImageListPullJob(job, [], t0).create, running)
    const children = fresh.map((c) => (c.spec.image === "a:latest" ? { ...c, status: { ...c.status!, conditions: [mismatch] } } : c))
    const decision = decideImageListPullJob(job, children, t0)
    const condition = decision.status.conditions?.find((c) => c.type === "DigestMismatch")
    expect(condition).toMatchObject({ status: "True", reason: "TagMoved" })
    expect(condition?.message).toContain('"a:latest" (ImagePullJob list-')
    expect(condition?.message).not.toContain("b:latest")
    expect(decision.events.filter((e) => e.reason === "DigestMismatch")).toHaveLength(1)

    // The same again: no second Warning.
    const again = decideImageListPullJob(listJob(job.spec, decision.status), children, t0)
    expect(again.events.filter((e) => e.reason === "DigestMismatch")).toEqual([])

    const agreed = decideImageListPullJob(listJob(job.spec, decision.status), fresh, t0)
    expect(agreed.status.conditions?.find((c) => c.type === "DigestMismatch")).toMatchObject({ status: "False", reason: "OneDigest" })
  })

  it("carries no DigestMismatch while no child ever had one", () => {
    const job = listJob({ images: ["a:latest"] })
    const children = created(decideImageListPullJob(job, [], t0).create, running)
    expect(decideImageListPullJob(job, children, t0).status.conditions?.map((c) => c.type)).toEqual(["Valid"])
  })
})
