/**
 * `--max-concurrent-pulls-per-registry` (issue 15, part 4): the pure pieces. Which nodes a job may
 * start given its room on the registry, what its status says about the rest, and the books that
 * give each job its room and name the jobs to wake when room frees.
 */
import { describe, expect, it } from "vitest"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { pullsUnderWay, registryOf, roomOnRegistry } from "../../src/controller/imagePullJob/registryRoom.ts"
import { tagPullPolicy } from "../../src/controller/imagePullJob/tagPolicy.ts"
import { RegistryBudget } from "../../src/controller/imagePullJob/registryBudget.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const task: JobTask = { image: "nginx", tag: "1.9.1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [] }
const nodes = (n: number) => Array.from({ length: n }, (_, i) => makeNodeImage(`node-${i}`))

const pulling = (name: string) =>
  makeNodeImage(name, {
    images: {
      nginx: {
        tags: [
          {
            tag: "1.9.1",
            version: 0,
            ownerReferences: [owner],
            createdAt: "2026-12-02T10:00:00Z",
            pullPolicy: tagPullPolicy(makeJob({ image: "nginx:1.9.1" }).spec, `${jobUid}/${name}`)
          }
        ]
      }
    },
    statuses: { nginx: [{ tag: "1.9.1", phase: "Pulling", version: 0 }] }
  })

describe("registryOf", () => {
  it("is the registry host as the reference normalises it, port kept", () => {
    expect(registryOf("nginx")).toBe("docker.io")
    expect(registryOf("index.docker.io/library/nginx:1")).toBe("docker.io")
    expect(registryOf("registry.k8s.io/pause:3.9")).toBe("registry.k8s.io")
    expect(registryOf(`localhost:5000/app@sha256:${"a".repeat(64)}`)).toBe("localhost:5000")
    expect(registryOf("ghcr.io/org/app")).toBe("ghcr.io")
  })
})

describe("pullsUnderWay", () => {
  it("counts per job the tags it owns not yet final for their version, on the tag's registry", () => {
    const done = makeNodeImage("done", {
      images: { nginx: { tags: [{ tag: "1.9.1", version: 1, ownerReferences: [owner] }] } },
      statuses: { nginx: [{ tag: "1.9.1", phase: "Succeeded", version: 1 }] }
    })
    const older = makeNodeImage("older", {
      images: { nginx: { tags: [{ tag: "1.9.1", version: 2, ownerReferences: [owner] }] } },
      statuses: { nginx: [{ tag: "1.9.1", phase: "Succeeded", version: 1 }] }
    })
    const unknownOwner = makeNodeImage("other", {
      images: { "quay.io/x/y": { tags: [{ tag: "1", version: 0, ownerReferences: [{ ...owner, uid: "gone" }] }] } }
    })
    const handWritten = makeNodeImage("hand", { images: { nginx: { tags: [{ tag: "2", version: 0 }] } } })
    const jobOf = (uid: string) => (uid === jobUid ? "default/job-1" : undefined)
    const counted = pullsUnderWay([done, older, pulling("a"), unknownOwner, handWritten], jobOf)
    expect([...counted]).toEqual([["default/job-1", { registry: "docker.io", inFlight: 2 }]])
  })
})

describe("roomOnRegistry", () => {
  it("is the limit less every node pulling and what older waiters are owed, never negative", () => {
    expect(roomOnRegistry({ limit: 10, othersInFlight: 4, heldAhead: 0, active: 1 })).toBe(5)
    expect(roomOnRegistry({ limit: 10, othersInFlight: 4, heldAhead: 3, active: 1 })).toBe(2)
    expect(roomOnRegistry({ limit: 10, othersInFlight: 9, heldAhead: 3, active: 1 })).toBe(0)
  })
})

describe("a job's decision under the registry limit", () => {
  const decide = (room: number | undefined, targets = nodes(5), parallelism = 4) =>
    decideImagePullJob({
      job: makeJob({ image: "nginx:1.9.1", parallelism }),
      task,
      targets,
      stale: [],
      now: t0,
      propagateEdits: true,
      ...(room === undefined ? {} : { registry: { registry: "docker.io", limit: 10, room } })
    })

  it("starts only as many nodes as the registry has room for, and says how many wait", () => {
    const decision = decide(1)
    expect(decision.writes.map((w) => w.node)).toEqual(["node-0"])
    expect(decision.heldBack).toBe(3)
    expect(decision.status).toMatchObject({
      active: 1,
      message: "job is running, progress 0.0%, 3 nodes waiting for registry docker.io (limit 10)"
    })
  })

  it("holds every node back when the registry is full", () => {
    const decision = decide(0)
    expect(decision.writes).toEqual([])
    expect(decision.heldBack).toBe(4)
    expect(decision.status.message).toBe("job is running, progress 0.0%, 4 nodes waiting for registry docker.io (limit 10)")
  })

  it("holds back only what parallelism would start: room beyond it is left", () => {
    const decision = decide(10)
    expect(decision.writes).toHaveLength(4)
    expect(decision.heldBack).toBe(0)
    expect(decision.status.message).toBe("job is running, progress 0.0%")
  })

  it("counts its own pulling nodes against parallelism, not twice against the room", () => {
    // Two pulling: parallelism 4 wants two more; the room (already net of them) allows one.
    const decision = decide(1, [pulling("node-0"), pulling("node-1"), ...nodes(5).slice(2)])
    expect(decision.writes.map((w) => w.node)).toEqual(["node-2"])
    expect(decision.heldBack).toBe(1)
    expect(decision.status.message).toContain("1 node waiting for registry docker.io (limit 10)")
  })

  it("is the same as without a limit when room is ample", () => {
    expect(decide(100).writes).toEqual(decide(undefined).writes)
    expect(decide(undefined).heldBack).toBe(0)
  })
})

describe("RegistryBudget", () => {
  it("without a limit gives no room figure, and keeps the books all the same (throttling may set a limit)", () => {
    const budget = new RegistryBudget(undefined)
    expect(budget.room("a", "docker.io", 0)).toBeUndefined()
    expect(budget.settle("a", "docker.io", 5, 0)).toEqual([])
    expect(budget.inFlight("docker.io")).toBe(5)
    expect(budget.limits()).toEqual(new Map())
  })

  it("shares the limit across jobs of one registry, and not across registries", () => {
    const budget = new RegistryBudget(10)
    expect(budget.room("a", "docker.io", 0)?.room).toBe(10)
    budget.settle("a", "docker.io", 7, 0)
    expect(budget.room("b", "docker.io", 0)?.room).toBe(3)
    expect(budget.room("c", "ghcr.io", 0)?.room).toBe(10)
    // A job's own earlier share is replaced by its fresh count, not added to it.
    expect(budget.room("a", "docker.io", 7)?.room).toBe(3)
    expect(budget.room("a", "docker.io", 2)?.room).toBe(8)
  })

  it("owes freed room to the job that waited longest, before a younger waiter or a job not waiting", () => {
    const budget = new RegistryBudget(10)
    budget.settle("a", "r", 10, 0)
    budget.settle("b", "r", 0, 4)
    budget.settle("c", "r", 0, 4)
    // Until a looks again its ten count, finished or not.
    expect(budget.room("b", "r", 0)?.room).toBe(0)
    // Eight of a's pulls finished: a may not take the room b and c wait for, b comes before c.
    budget.settle("a", "r", 2, 0)
    expect(budget.room("a", "r", 2)?.room).toBe(0)
    expect(budget.room("b", "r", 0)?.room).toBe(8)
    expect(budget.room("c", "r", 0)?.room).toBe(4)
  })

  it("wakes only the oldest waiters whose held nodes cover the freed room, each once until it decides", () => {
    const budget = new RegistryBudget(10)
    budget.settle("a", "r", 10, 0)
    budget.settle("b", "r", 0, 3)
    budget.settle("c", "r", 0, 3)
    budget.settle("d", "r", 0, 3)
    budget.settle("other", "elsewhere", 0, 5)
    // Nothing freed, nobody woken.
    expect(budget.settle("a", "r", 10, 0)).toEqual([])
    // Four freed: b (3) does not cover it, c does; d and the other registry's waiter stay asleep.
    expect(budget.settle("a", "r", 6, 0)).toEqual(["b", "c"])
    // Woken already: not named again while they have not decided, but their held nodes count.
    expect(budget.settle("a", "r", 4, 0)).toEqual([])
    expect(budget.settle("a", "r", 3, 0)).toEqual(["d"])
    expect(budget.settle("a", "r", 2, 0)).toEqual([])
    // b decided (took 3): named again only once it waits and room frees anew.
    expect(budget.settle("b", "r", 3, 0)).toEqual([])
    expect(budget.heldBack("r")).toBe(6)
  })

  it("keeps a waiter's place while it keeps waiting, and gives it up when it stops", () => {
    const budget = new RegistryBudget(4)
    budget.settle("a", "r", 4, 0)
    budget.settle("b", "r", 0, 2)
    budget.settle("c", "r", 0, 2)
    budget.settle("b", "r", 0, 2)
    expect(budget.room("c", "r", 0)?.room).toBe(0)
    expect(budget.settle("a", "r", 2, 0)).toEqual(["b"])
    budget.settle("b", "r", 2, 0)
    // b no longer waits: c is first now, and b, wanting more later, queues behind it.
    budget.settle("a", "r", 0, 0)
    expect(budget.room("b", "r", 2)?.room).toBe(0)
    expect(budget.room("c", "r", 0)?.room).toBe(2)
  })

  it("hands a forgotten job's room to the waiters, and a job moving registry frees the old one", () => {
    const budget = new RegistryBudget(5)
    budget.settle("a", "r", 5, 0)
    budget.settle("b", "r", 0, 5)
    expect(budget.forget("a")).toEqual(["b"])
    expect(budget.inFlight("r")).toBe(0)
    expect(budget.forget("a")).toEqual([])
    budget.settle("b", "r", 5, 0)
    budget.settle("c", "r", 0, 1)
    // b's image now comes from another registry: its room on r goes to c.
    expect(budget.settle("b", "s", 0, 0)).toEqual(["c"])
    expect(budget.inFlight("r")).toBe(0)
  })
})
