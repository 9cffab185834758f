import { describe, expect, it } from "vitest"
import { buildModel, statusNodeImage } from "../../src/statusView/buildModel.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { at, listJob, nodeImage, pullJob, t0 } from "./fixtures.ts"

const running = {
  startTime: at(0),
  desired: 4,
  active: 2,
  succeeded: 1,
  failed: 1,
  failedNodes: ["node-4", "node-9"],
  message: "job is running, progress 50.0%"
}

// The NodeImages as the status view's store holds them: decoded once, at its edge.
const build = ({
  nodeImages = [],
  ...objects
}: Partial<Omit<Parameters<typeof buildModel>[0], "nodeImages">> & { nodeImages?: ReadonlyArray<KubeObject> }) =>
  buildModel({ namespace: "default", imagePullJobs: [], imageListPullJobs: [], ...objects, nodeImages: nodeImages.map(statusNodeImage) })

describe("buildModel", () => {
  it("takes counts, times and message from the job, and node rows from the NodeImages' status of its tag", () => {
    const model = build({
      imagePullJobs: [pullJob("warm", { image: "nginx:1.9.1", status: running })],
      nodeImages: [
        nodeImage("node-2", {
          image: "nginx",
          tag: "1.9.1",
          ownerUid: "uid-warm",
          status: { phase: "Pulling", progress: 30, startTime: at(5) }
        }),
        nodeImage("node-1", { image: "nginx", tag: "1.9.1", ownerUid: "uid-warm", status: { phase: "Pulling", startTime: at(7) } }),
        nodeImage("node-4", { image: "nginx", tag: "1.9.1", ownerUid: "uid-warm", status: { phase: "Failed", message: "not found" } }),
        nodeImage("node-3", { image: "nginx", tag: "1.9.1", ownerUid: "uid-warm", status: { phase: "Succeeded" } })
      ]
    })
    expect(model).toEqual({
      namespace: "default",
      jobs: [
        {
          kind: "ImagePullJob",
          namespace: "default",
          name: "warm",
          target: "nginx:1.9.1",
          phase: "running",
          message: "job is running, progress 50.0%",
          desired: 4,
          active: 2,
          succeeded: 1,
          failed: 1,
          startTime: t0,
          nodes: [
            { node: "node-1", phase: "Pulling", startTime: t0 + 7_000 },
            { node: "node-2", phase: "Pulling", progress: 30, startTime: t0 + 5_000 },
            { node: "node-4", phase: "Failed", message: "not found" },
            // Failed for the job, but its tag has left the NodeImage: still listed.
            { node: "node-9", phase: "Failed" }
          ]
        }
      ]
    })
  })

  it("ignores tags of another owner, another tag, or a version the daemon has not reported on", () => {
    const model = build({
      imagePullJobs: [pullJob("warm", { image: "docker.io/library/nginx:1.9.1", status: running })],
      nodeImages: [
        nodeImage("other-owner", { image: "nginx", tag: "1.9.1", ownerUid: "uid-else", status: { phase: "Pulling" } }),
        nodeImage("other-tag", { image: "nginx", tag: "latest", ownerUid: "uid-warm", status: { phase: "Pulling" } }),
        nodeImage("old-version", {
          image: "nginx",
          tag: "1.9.1",
          ownerUid: "uid-warm",
          version: 2,
          status: { phase: "Failed", version: 1 }
        })
      ]
    })
    expect(model.jobs[0]?.nodes.map((n) => n.node)).toEqual(["node-4", "node-9"])
  })

  it("a failed node whose tag the daemon has not reported on was still pulling when the job's deadline passed", () => {
    const ended = { ...running, completionTime: at(3), active: 0, failed: 2, failedNodes: ["node-3", "node-9"] }
    const model = build({
      imagePullJobs: [pullJob("warm", { image: "nginx:1.9.1", status: ended })],
      // A daemon writes Pulling only once a pull outlives 2 s: node-3's tag has no report yet.
      nodeImages: [nodeImage("node-3", { image: "nginx", tag: "1.9.1", ownerUid: "uid-warm" })]
    })
    expect(model.jobs[0]?.nodes).toEqual([
      { node: "node-3", phase: "Pulling" },
      { node: "node-9", phase: "Failed" }
    ])
  })

  it("tells the phases apart: completed, paused, invalid (decode or Valid=False), running", () => {
    const model = build({
      imagePullJobs: [
        pullJob("a-done", { status: { ...running, completionTime: at(60) } }),
        pullJob("b-paused", { parallelism: "0%", status: running }),
        pullJob("c-bad-image", { image: "Not A Ref::" }),
        pullJob("d-refused", {
          status: { conditions: [{ type: "Valid", status: "False", reason: "Invalid", message: "selector is bad" }] }
        }),
        pullJob("e-new", {})
      ]
    })
    expect(model.jobs.map((j) => [j.name, j.phase])).toEqual([
      ["a-done", "completed"],
      ["b-paused", "paused"],
      ["c-bad-image", "invalid"],
      ["d-refused", "invalid"],
      ["e-new", "running"]
    ])
    expect(model.jobs[0]?.completionTime).toBe(t0 + 60_000)
    expect(model.jobs[2]?.message).toContain("Not A Ref::")
    expect(model.jobs[3]?.message).toBe("selector is bad")
  })

  it("counts a list job's images, puts its children after it, and with a job name keeps that family only", () => {
    const objects = {
      imageListPullJobs: [
        listJob("base", ["nginx", "busybox"], {
          completionTime: at(90),
          desired: 2,
          active: 0,
          completed: 2,
          succeeded: 1,
          failedImageStatuses: [{ name: "busybox", message: "failed on 1 node" }]
        })
      ],
      imagePullJobs: [pullJob("base-x1", { owner: "base" }), pullJob("aaa", {}), pullJob("zzz", {})]
    }
    const all = build(objects)
    expect(all.jobs.map((j) => j.name)).toEqual(["aaa", "base", "base-x1", "zzz"])
    const base = all.jobs[1]
    expect(base).toMatchObject({
      kind: "ImageListPullJob",
      target: "2 images",
      phase: "completed",
      desired: 2,
      succeeded: 1,
      failed: 1,
      message: "busybox: failed on 1 node"
    })
    expect(all.jobs[2]?.parent).toBe("base")

    expect(build({ ...objects, job: "base" }).jobs.map((j) => j.name)).toEqual(["base", "base-x1"])
    expect(build({ ...objects, job: "zzz" }).jobs.map((j) => j.name)).toEqual(["zzz"])
    expect(build({ ...objects, job: "nope" })).toEqual({ namespace: "default", job: "nope", jobs: [] })
  })

  it("leaves out jobs of other namespaces", () => {
    expect(build({ namespace: "other", imagePullJobs: [pullJob("a", {})] }).jobs).toEqual([])
  })

  it("lists the nodes the startup taint holds, with the pulls their NodeImages still wait on", () => {
    const key = "preheat.kruise.io/warming"
    const node = (name: string, taints: ReadonlyArray<Record<string, string>>): KubeObject => ({
      metadata: { name, creationTimestamp: at(-30) },
      spec: { taints }
    })
    const model = build({
      nodeImages: [
        nodeImage("node-10", { image: "nginx", tag: "1.25", ownerUid: "u", status: { phase: "Pulling", progress: 40 } }),
        nodeImage("node-3", { image: "nginx", tag: "1.25", ownerUid: "u", status: { phase: "Succeeded" } }),
        nodeImage("node-1", { image: "nginx", tag: "1.25", ownerUid: "u" })
      ],
      warming: {
        taintKey: key,
        nodes: [
          node("node-10", [{ key, effect: "NoSchedule", timeAdded: at(-5) }]),
          node("node-3", [{ key, effect: "NoSchedule" }]),
          node("node-2", [{ key, effect: "NoExecute" }]),
          node("node-1", [{ key: "gpu", effect: "NoSchedule" }])
        ]
      }
    })
    expect(model.warming).toEqual([
      { node: "node-3", since: t0 - 30_000, pulls: [] },
      { node: "node-10", since: t0 - 5000, pulls: [{ image: "nginx:1.25", phase: "Pulling", progress: 40 }] }
    ])
    expect(build({}).warming).toBeUndefined()
  })
})

describe("buildModel: digests", () => {
  const a = `sha256:${"a".repeat(64)}`
  const b = `sha256:${"b".repeat(64)}`
  const mismatch = {
    type: "DigestMismatch",
    status: "True",
    reason: "TagMoved",
    message: `"nginx:latest" resolved to 2 digests on the job's nodes (the tag moved during the job): ${a} on node-1; ${b} on node-2`,
    lastTransitionTime: at(0)
  }
  const imageDigests = [
    { digest: a, nodes: 3 },
    { digest: b, nodes: 1 }
  ]

  it("carries the digests and, while DigestMismatch is True, its message", () => {
    const model = build({
      imagePullJobs: [pullJob("warm", { image: "nginx:latest", status: { ...running, imageDigests, conditions: [mismatch] } })]
    })
    expect(model.jobs[0]).toMatchObject({ digests: imageDigests, digestMismatch: mismatch.message })
  })

  it("no mismatch once the condition is False", () => {
    const model = build({
      imagePullJobs: [
        pullJob("warm", {
          image: "nginx:latest",
          status: { ...running, imageDigests: [imageDigests[0]], conditions: [{ ...mismatch, status: "False", reason: "OneDigest" }] }
        })
      ]
    })
    expect(model.jobs[0]?.digests).toEqual([imageDigests[0]])
    expect(model.jobs[0]?.digestMismatch).toBeUndefined()
  })
})

describe("buildModel: the nodes' kubelet image verification", () => {
  /** A node that pulled the job's image, and what its daemon read of its kubelet's policy. */
  const pulled = (name: string, verification: Record<string, unknown> | undefined, authenticated = false, uid = "uid-app") => {
    const object = nodeImage(name, {
      image: "ghcr.io/acme/app",
      tag: "1",
      ownerUid: uid,
      status: { phase: "Succeeded", ...(authenticated ? { authenticated: true } : {}) }
    })
    const status = object["status"] as Record<string, unknown>
    return { ...object, status: { ...status, ...(verification === undefined ? {} : { kubeletImageVerification: verification }) } }
  }
  const job = (pullSecrets?: ReadonlyArray<string>) => {
    const object = pullJob("app", { image: "ghcr.io/acme/app:1", status: running })
    const spec = object["spec"] as Record<string, unknown>
    return { ...object, spec: { ...spec, ...(pullSecrets === undefined ? {} : { pullSecrets }) } }
  }
  const nodes = [
    pulled("node-1", { policy: "NeverVerifyPreloadedImages" }, true),
    pulled("node-2", { policy: "AlwaysVerify" }),
    pulled("node-3", { policy: "NeverVerifyAllowlistedImages", allowlist: ["ghcr.io/acme/app"] }),
    pulled("node-4", undefined),
    pulled("node-5", { policy: "Unknown", message: "no kubelet configuration at /var/lib/kubelet/config.yaml" }),
    // Another job's tag on a node that lets pods in: not this job's.
    pulled("node-6", { policy: "NeverVerify" }, true, "uid-other")
  ]

  it("names, per job, the nodes that let any pod start an image pulled with credentials, and those that make pods check", () => {
    const model = build({ imagePullJobs: [job()], nodeImages: nodes })
    expect(model.jobs[0]?.unverified).toEqual({
      nodes: 2,
      examples: [
        { node: "node-1", why: "NeverVerifyPreloadedImages" },
        { node: "node-3", why: "NeverVerifyAllowlistedImages (allowlisted)" }
      ]
    })
    expect(model.jobs[0]?.reverified).toEqual({ nodes: 1, examples: [{ node: "node-2", why: "AlwaysVerify" }] })
    expect(model.policies).toEqual([
      { policy: "NeverVerify", nodes: 1 },
      { policy: "NeverVerifyPreloadedImages", nodes: 1 },
      { policy: "NeverVerifyAllowlistedImages", nodes: 1 },
      { policy: "AlwaysVerify", nodes: 1 },
      { policy: "Unknown", nodes: 1 }
    ])
  })

  it("an image that needs no credentials shows only where pods check theirs; pull secrets make it need them", () => {
    const anonymous = nodes.map((n) => {
      const status = n.status as { imageStatuses?: Record<string, { tags: Array<Record<string, unknown>> }> }
      const tags = status.imageStatuses?.["ghcr.io/acme/app"]?.tags.map(({ authenticated: _, ...t }) => t) ?? []
      return { ...n, status: { ...status, imageStatuses: { "ghcr.io/acme/app": { tags } } } }
    })
    const open = build({ imagePullJobs: [job()], nodeImages: anonymous })
    expect(open.jobs[0]?.unverified).toBeUndefined()
    expect(open.jobs[0]?.reverified?.nodes).toBe(1)
    expect(build({ imagePullJobs: [job(["registry"])], nodeImages: anonymous }).jobs[0]?.unverified?.nodes).toBe(2)
  })

  it("no node reported a policy: nothing said", () => {
    const model = build({ imagePullJobs: [job()], nodeImages: [pulled("node-1", undefined, true)] })
    expect(model.policies).toBeUndefined()
    expect(model.jobs[0]).not.toHaveProperty("unverified")
  })
})

describe("a job that seeds", () => {
  const seeded = (status: "True" | "False", reason: string, message = "") => ({
    type: "Seeded",
    status,
    reason,
    message,
    lastTransitionTime: at(0)
  })
  const stageOf = (status: Record<string, unknown>) => {
    const [job] = build({ imagePullJobs: [pullJob("warm", { status })] }).jobs
    return { stage: job?.stage, seedingProblem: job?.seedingProblem }
  }

  it("is seeding while its Seeded condition says so, fanning out once the seeds pulled and nodes are left", () => {
    expect(stageOf({ ...running, conditions: [seeded("False", "Seeding")] })).toEqual({ stage: "seeding", seedingProblem: undefined })
    expect(stageOf({ ...running, conditions: [seeded("True", "SeedsPulled")] })).toEqual({
      stage: "fanning out",
      seedingProblem: undefined
    })
    // Every node done (a Never job long past seeding), or finished: no stage.
    const allDone = { ...running, active: 0, succeeded: 3, failed: 1 }
    expect(stageOf({ ...allDone, conditions: [seeded("True", "SeedsPulled")] }).stage).toBeUndefined()
    expect(stageOf({ ...running, completionTime: at(60), conditions: [seeded("False", "Seeding")] }).stage).toBeUndefined()
    expect(stageOf(running).stage).toBeUndefined()
  })

  it("carries a bad seed-nodes value's message", () => {
    expect(stageOf({ ...running, conditions: [seeded("False", "InvalidSeedNodes", "annotation ...: bad")] })).toEqual({
      stage: undefined,
      seedingProblem: "annotation ...: bad"
    })
  })
})
