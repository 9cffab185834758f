import { describe, expect, it } from "@effect/vitest"
import type { ImageTagStatus, NodeImageSpec } from "../../src/api/nodeImage.ts"
import { attemptPolicy, attemptTimeoutMillis, backoffMillis, timeLeftAfter } from "../../src/daemon/attemptPolicy.ts"
import { firstSyncStatus, initialTags } from "../../src/daemon/firstSync.ts"
import { findImage } from "../../src/daemon/imagePresence.ts"
import { desiredNodeStatus } from "../../src/daemon/nodeStatus.ts"
import { describePullError } from "../../src/daemon/pullMessages.ts"
import { tagTasks } from "../../src/daemon/tagTask.ts"
import { planWorkers } from "../../src/daemon/workerPlan.ts"
import { DeadlineExceeded, ImageNotFound } from "../../src/cri/errors.ts"

const digest = `sha256:${"d".repeat(64)}`

const spec = (images: Record<string, ReadonlyArray<{ readonly tag: string; readonly version?: number }>>): NodeImageSpec => ({
  images: Object.fromEntries(
    Object.entries(images).map(([name, tags]) => [
      name,
      {
        tags: tags.map((t) => ({ imagePullPolicy: "IfNotPresent" as const, ...t, version: t.version ?? 0 }))
      }
    ])
  )
})

const statusOf = (tag: string, phase: ImageTagStatus["phase"], version = 0): ImageTagStatus => ({ tag, phase, version })

describe("tagTasks", () => {
  it("applies the defaults and turns a digest tag into name@digest", () => {
    const [plain, pinned] = tagTasks({
      images: {
        nginx: { tags: [{ tag: "1.25", version: 2, imagePullPolicy: "Always" }] },
        "quay.io/app": {
          pullSecrets: [{ namespace: "ns", name: "s" }],
          sandboxConfig: { labels: { a: "b" } },
          tags: [
            {
              tag: digest,
              version: 0,
              imagePullPolicy: "IfNotPresent",
              pullPolicy: { timeoutSeconds: 30, backoffLimit: 0, activeDeadlineSeconds: 90 },
              createdAt: "2026-01-01T00:00:00Z"
            }
          ]
        }
      }
    })
    expect(plain).toEqual({
      key: "nginx 1.25",
      image: "nginx",
      tag: "1.25",
      version: 2,
      reference: "nginx:1.25",
      imagePullPolicy: "Always",
      timeoutSeconds: 600,
      backoffLimit: 3,
      pullSecrets: [],
      owners: []
    })
    expect(pinned).toMatchObject({
      reference: `quay.io/app@${digest}`,
      timeoutSeconds: 30,
      backoffLimit: 0,
      activeDeadlineSeconds: 90,
      createdAt: "2026-01-01T00:00:00Z",
      sandboxConfig: { labels: { a: "b" } },
      pullSecrets: [{ namespace: "ns", name: "s" }]
    })
  })
})

describe("planWorkers", () => {
  const tasks = tagTasks(spec({ app: [{ tag: "a" }, { tag: "b", version: 1 }, { tag: "c" }] }))

  it("starts every tag not finished in the status", () => {
    const plan = planWorkers(tasks, { app: { tags: [statusOf("a", "Succeeded"), statusOf("c", "Pulling")] } }, new Map())
    expect(plan.start.map((t) => t.key)).toEqual(["app b", "app c"])
    expect(plan.stop).toEqual([])
  })

  it("a finished status of another version does not count", () => {
    const plan = planWorkers(
      tasks,
      { app: { tags: [statusOf("b", "Failed", 0)] } },
      new Map([
        ["app a", 0],
        ["app c", 0]
      ])
    )
    expect(plan.start.map((t) => `${t.key}@${t.version}`)).toEqual(["app b@1"])
  })

  it("leaves workers of this process alone, running or finished, and stops those of removed tags or old versions", () => {
    const known = new Map([
      ["app a", 0],
      ["app b", 0],
      ["app gone", 0]
    ])
    const plan = planWorkers(tasks, undefined, known)
    expect(plan.stop).toEqual(["app b", "app gone"])
    expect(plan.start.map((t) => `${t.key}@${t.version}`)).toEqual(["app b@1", "app c@0"])
  })
})

describe("attempt policy", () => {
  const [task] = tagTasks(spec({ app: [{ tag: "a" }] }))

  it("backs off 1 s doubling to 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(backoffMillis)).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000])
  })

  it("bounds an attempt by the timeout and by the time left before the deadline", () => {
    const policy = attemptPolicy(
      { ...task!, timeoutSeconds: 60, backoffLimit: 2, activeDeadlineSeconds: 100, createdAt: "1970-01-01T00:00:10Z" },
      50_000
    )
    expect(policy).toEqual({ attempts: 3, timeoutMillis: 60_000, deadlineAt: 110_000, throttledRetries: 10 })
    expect(attemptTimeoutMillis(policy, 20_000)).toBe(60_000)
    expect(attemptTimeoutMillis(policy, 80_000)).toBe(30_000)
    expect(attemptTimeoutMillis(policy, 120_000)).toBe(0)
    expect(timeLeftAfter(policy, 100_000, 9_000)).toBe(true)
    expect(timeLeftAfter(policy, 100_000, 10_000)).toBe(false)
  })

  it("counts the deadline from the worker's start when createdAt is absent, and has none without activeDeadlineSeconds", () => {
    expect(attemptPolicy({ ...task!, activeDeadlineSeconds: 5 }, 1000).deadlineAt).toBe(6000)
    expect(attemptPolicy(task!, 1000).deadlineAt).toBeUndefined()
    expect(attemptTimeoutMillis(attemptPolicy(task!, 0), 1e12)).toBe(600_000)
  })
})

describe("findImage", () => {
  const images = [
    { id: "sha256:1", repoTags: ["docker.io/library/nginx:1.25"], repoDigests: [`docker.io/library/nginx@${digest}`], size: 1 },
    { id: "sha256:2", repoTags: ["registry.example.com:5000/team/app:v1"], repoDigests: [], size: 1 }
  ]

  it("matches tags and digests with docker.io and library/ normalised", () => {
    for (const ref of ["nginx:1.25", "docker.io/nginx:1.25", "index.docker.io/library/nginx:1.25", `nginx@${digest}`]) {
      expect(findImage(ref, images)?.id, ref).toBe("sha256:1")
    }
    expect(findImage("registry.example.com:5000/team/app:v1", images)?.id).toBe("sha256:2")
  })

  it("does not match another tag, registry or digest, nor a tag for a digest", () => {
    for (const ref of [
      "nginx:1.26",
      "nginx",
      "quay.io/nginx:1.25",
      `nginx@sha256:${"e".repeat(64)}`,
      `registry.example.com:5000/team/app@${digest}`,
      "NOT A REF"
    ]) {
      expect(findImage(ref, images), ref).toBeUndefined()
    }
  })
})

describe("desiredNodeStatus", () => {
  const current = spec({ app: [{ tag: "a" }, { tag: "b", version: 1 }], web: [{ tag: "x" }] })

  it("takes live reports for the spec's version, else what is stored; drops what left the spec; keeps other fields", () => {
    const live = new Map([
      [
        "app",
        new Map([
          ["b", statusOf("b", "Pulling", 1)],
          ["a", statusOf("a", "Pulling", 7)]
        ])
      ]
    ])
    const stored = {
      note: "kept",
      imageStatuses: {
        app: { tags: [statusOf("a", "Succeeded"), statusOf("b", "Succeeded", 0), statusOf("old", "Failed")] },
        gone: { tags: [statusOf("z", "Succeeded")] }
      }
    }
    const desired = desiredNodeStatus({ spec: current, stored, live, initial: undefined, now: 0 })
    expect(desired).toEqual({
      note: "kept",
      desired: 3,
      pulling: 2,
      waiting: 0,
      succeeded: 1,
      failed: 0,
      imageStatuses: { app: { tags: [statusOf("a", "Succeeded"), statusOf("b", "Pulling", 1)] } }
    })
  })

  it("keeps a stored firstSyncStatus as it is", () => {
    const firstSync = { syncAt: "2026-01-01T00:00:00Z", status: "Failed", message: "earlier" }
    const desired = desiredNodeStatus({ spec: current, stored: { firstSyncStatus: firstSync }, live: new Map(), initial: [], now: 5000 })
    expect(desired["firstSyncStatus"]).toBe(firstSync)
  })
})

describe("firstSyncStatus", () => {
  const current = spec({ app: [{ tag: "a" }, { tag: digest }] })
  const initial = initialTags(current)

  it("waits for every initial tag's current version to finish", () => {
    expect(firstSyncStatus(initial, current, { app: { tags: [statusOf("a", "Succeeded")] } }, 0)).toBeUndefined()
    expect(
      firstSyncStatus(initial, current, { app: { tags: [statusOf("a", "Succeeded"), statusOf(digest, "Succeeded", 3)] } }, 0)
    ).toBeUndefined()
  })

  it("is Failed naming the failed tags, or Succeeded", () => {
    expect(firstSyncStatus(initial, current, { app: { tags: [statusOf("a", "Succeeded"), statusOf(digest, "Failed")] } }, 2000)).toEqual({
      syncAt: "1970-01-01T00:00:02Z",
      status: "Failed",
      message: `1 of 2 images failed to pull: app@${digest}`
    })
    expect(
      firstSyncStatus(initial, current, { app: { tags: [statusOf("a", "Succeeded"), statusOf(digest, "Succeeded")] } }, 0)
    ).toMatchObject({ status: "Succeeded", message: "2 images pulled" })
  })
})

describe("pull error messages", () => {
  it("name the problem in words", () => {
    expect(describePullError(new DeadlineExceeded({ image: "x" }), 1500)).toBe("pull timed out after 1.5s")
    expect(describePullError(new ImageNotFound({ image: "x", message: "x: not found" }), 1000)).toBe("image not found: x: not found")
  })
})
