/**
 * The pull order (imagePullJob/pullOrder.ts): which of a job's targets get its tag, in what order
 * and when; and that the decision and the target selection follow whichever order they are handed.
 */
import { describe, expect, it } from "vitest"
import { maxNodeImages } from "../../src/api/nodeImage.ts"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import { decideImagePullJob, takeWaiting } from "../../src/controller/imagePullJob/decide.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { seedFirst, targetOrder } from "../../src/controller/imagePullJob/pullOrder.ts"
import type { PullOrder, PullTurnInput } from "../../src/controller/imagePullJob/pullOrder.ts"
import { selectTargets } from "../../src/controller/imagePullJob/targets.ts"
import { cohortOf } from "../../src/controller/imagePullJob/cohort.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const task: JobTask = { image: "nginx", tag: "1.9.1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [] }
const nodes = (n: number) => Array.from({ length: n }, (_, i) => makeNodeImage(`node-${i}`))
const names = (list: ReadonlyArray<NodeImage>) => list.map((n) => n.metadata.name)

/** A node whose NodeImage holds as many images as it may, none of them the job's. */
const full = (name: string) =>
  makeNodeImage(name, {
    images: Object.fromEntries(Array.from({ length: maxNodeImages }, (_, i) => [`image-${i}`, { tags: [{ tag: "1", version: 0 }] }]))
  })

const succeeded = (name: string) =>
  makeNodeImage(name, {
    images: { nginx: { tags: [{ tag: "1.9.1", version: 0, ownerReferences: [owner], createdAt: "2026-12-02T10:00:00Z" }] } },
    statuses: { nginx: [{ tag: "1.9.1", phase: "Succeeded", version: 0 }] }
  })

const turn = (waiting: ReadonlyArray<NodeImage>, input: Partial<PullTurnInput>) =>
  targetOrder.next({
    image: "nginx",
    desired: 10,
    active: 0,
    succeeded: 0,
    parallelism: 4,
    waiting: (limit, fits) => takeWaiting(waiting, limit, fits),
    registry: undefined,
    retries: [],
    ...input
  })

describe("cohortOf: the seed of a job's order", () => {
  const job = (uid: string, creationTimestamp: string, owner?: string) => ({
    metadata: {
      uid,
      creationTimestamp,
      ...(owner === undefined
        ? {}
        : { ownerReferences: [{ apiVersion: "v1", kind: "ImageListPullJob", name: "l", uid: owner, controller: true }] })
    }
  })

  it("is shared by jobs created in the same minute, and by the children of one owner whenever they were created", () => {
    expect(cohortOf(job("a", "2026-12-02T10:00:01Z"))).toBe(cohortOf(job("b", "2026-12-02T10:00:59Z")))
    expect(cohortOf(job("a", "2026-12-02T10:00:59Z"))).not.toBe(cohortOf(job("b", "2026-12-02T10:01:00Z")))
    expect(cohortOf(job("a", "2026-12-02T10:00:59Z", "list"))).toBe(cohortOf(job("b", "2026-12-02T10:01:00Z", "list")))
    expect(cohortOf(job("a", "2026-12-02T10:00:01Z", "list"))).not.toBe(cohortOf(job("b", "2026-12-02T10:00:01Z", "other")))
  })

  it("gives jobs of one seed the same order, and jobs of other seeds other starting nodes", () => {
    const all = nodes(50)
    const order = (seed: string) => names(targetOrder.targets(all, { seed, named: false }))
    const together = cohortOf(job("a", "2026-12-02T10:00:01Z"))
    expect(order(together)).toEqual(order(cohortOf(job("b", "2026-12-02T10:00:30Z"))))
    const starts = new Set(["10:01", "10:02", "10:03", "10:04", "10:05"].map((at) => order(cohortOf(job("a", `2026-12-02T${at}:00Z`)))[0]))
    expect(starts.size).toBeGreaterThan(1)
  })
})

describe("targetOrder", () => {
  it("keeps named nodes in the job's order, and takes the others by name from an offset of the job's seed", () => {
    const selected = [makeNodeImage("c"), makeNodeImage("a"), makeNodeImage("b")]
    expect(names(targetOrder.targets(selected, { seed: "u1", named: true }))).toEqual(["c", "a", "b"])
    const all = nodes(10).reverse()
    const sorted = names(nodes(10))
    const orders = ["u1", "u2", "u3", "u4", "u5", "u6"].map((seed) => names(targetOrder.targets(all, { seed, named: false })))
    for (const order of orders) {
      const offset = sorted.indexOf(order[0])
      expect(order).toEqual([...sorted.slice(offset), ...sorted.slice(0, offset)])
    }
    expect(new Set(orders.map((order) => order[0])).size).toBeGreaterThan(1)
    expect(names(targetOrder.targets(all, { seed: "u1", named: false }))).toEqual(orders[0])
  })

  it("starts the first targets parallelism leaves room for, passing over full nodes, and holds back what the registry has no room for", () => {
    const waiting = [makeNodeImage("n0"), full("n1"), makeNodeImage("n2"), makeNodeImage("n3"), makeNodeImage("n4")]
    const free = turn(waiting, { active: 1 })
    expect([names(free.start), free.heldBack, free.fullNodes]).toEqual([["n0", "n2", "n3"], 0, ["n1"]])
    const limited = turn(waiting, { active: 1, registry: { registry: "docker.io", limit: 10, room: 2 } })
    expect([names(limited.start), limited.heldBack, limited.fullNodes]).toEqual([["n0", "n2"], 1, ["n1"]])
  })

  it("retries failed nodes after the nodes still without the tag, within what parallelism and the registry's room leave", () => {
    const retries = [makeNodeImage("r0"), makeNodeImage("r1"), makeNodeImage("r2")]
    // Parallelism goes to the new nodes first: the retries wait for it (not held back by the registry).
    const busy = turn(nodes(4), { retries })
    expect([names(busy.start), names(busy.retry), busy.heldBack]).toEqual([["node-0", "node-1", "node-2", "node-3"], [], 0])
    const some = turn(nodes(1), { retries })
    expect([names(some.start), names(some.retry), some.heldBack]).toEqual([["node-0"], ["r0", "r1", "r2"], 0])
    // The registry's room goes to the new node first; the retry parallelism allows but the room does not is held back.
    const limited = turn(nodes(1), { retries, parallelism: 3, registry: { registry: "docker.io", limit: 4, room: 2 } })
    expect([names(limited.start), names(limited.retry), limited.heldBack]).toEqual([["node-0"], ["r0"], 1])
  })
})

describe("seedFirst", () => {
  const seeded = (waiting: ReadonlyArray<NodeImage>, seeds: number, input: Partial<PullTurnInput>) =>
    seedFirst(seeds).next({
      image: "nginx",
      desired: 10,
      active: 0,
      succeeded: 0,
      parallelism: 4,
      waiting: (limit, fits) => takeWaiting(waiting, limit, fits),
      registry: undefined,
      retries: [],
      ...input
    })

  it("starts only the seeds until they succeeded, then the rest within parallelism", () => {
    expect(names(seeded(nodes(10), 2, {}).start)).toEqual(["node-0", "node-1"])
    // The seeds pulling: nobody else starts.
    expect(names(seeded(nodes(8), 2, { active: 2 }).start)).toEqual([])
    // One seed done, one pulling: still none.
    expect(names(seeded(nodes(8), 2, { active: 1, succeeded: 1 }).start)).toEqual([])
    // Both done: the target order's turn, within parallelism.
    expect(names(seeded(nodes(8), 2, { succeeded: 2 }).start)).toEqual(["node-0", "node-1", "node-2", "node-3"])
  })

  it("replaces a failed seed by the next target (its place is free again)", () => {
    // Seed node-0 failed: not active, not succeeded, no longer waiting; the next target takes its place.
    expect(names(seeded(nodes(8).slice(1), 1, {}).start)).toEqual(["node-1"])
    expect(names(seeded(nodes(8).slice(2), 2, { active: 1 }).start)).toEqual(["node-2"])
  })

  it("starts the seeds within parallelism when it is smaller, and within the registry's room", () => {
    expect(names(seeded(nodes(10), 5, { parallelism: 2 }).start)).toEqual(["node-0", "node-1"])
    expect(names(seeded(nodes(10), 5, { parallelism: 2, active: 2 }).start)).toEqual([])
    const limited = seeded(nodes(10), 3, { registry: { registry: "docker.io", limit: 1, room: 1 } })
    expect([names(limited.start), limited.heldBack]).toEqual([["node-0"], 2])
  })

  it("retries failed nodes whose credentials changed only within the seeds' room", () => {
    const retries = [makeNodeImage("r0"), makeNodeImage("r1")]
    expect(names(seeded([], 1, { retries }).retry)).toEqual(["r0"])
    expect(names(seeded([], 1, { retries, active: 1 }).retry)).toEqual([])
  })

  it("orders the targets as the order it wraps", () => {
    const all = nodes(6).reverse()
    expect(names(seedFirst(2).targets(all, { seed: "u1", named: false }))).toEqual(
      names(targetOrder.targets(all, { seed: "u1", named: false }))
    )
  })
})

describe("another pull order", () => {
  const decide = (targets: ReadonlyArray<NodeImage>, pullOrder?: PullOrder) =>
    decideImagePullJob({
      job: makeJob({ image: "nginx:1.9.1", parallelism: 4 }),
      task,
      targets,
      stale: [],
      now: t0,
      propagateEdits: false,
      ...(pullOrder === undefined ? {} : { pullOrder })
    })

  it("decides who pulls when, in place of the target order", () => {
    expect(decide(nodes(5)).writes.map((w) => w.node)).toEqual(["node-0", "node-1", "node-2", "node-3"])
    expect(decide(nodes(5), seedFirst(1)).writes.map((w) => w.node)).toEqual(["node-0"])
    expect(decide([succeeded("node-0"), ...nodes(5).slice(1)], seedFirst(1)).writes.map((w) => w.node)).toEqual([
      "node-1",
      "node-2",
      "node-3",
      "node-4"
    ])
    const oneAtATime: PullOrder = { targets: targetOrder.targets, next: (input) => targetOrder.next({ ...input, parallelism: 1 }) }
    expect(decide(nodes(5), oneAtATime).writes.map((w) => w.node)).toEqual(["node-0"])
  })

  it("orders the selected targets", () => {
    const lastFirst: PullOrder = { targets: (selected) => [...selected].reverse(), next: targetOrder.next }
    const selected = selectTargets(
      { selector: { names: ["node-0", "node-2"] } },
      { namespace: "default", seed: jobUid },
      nodes(3),
      () => [],
      lastFirst
    )
    expect(names(selected)).toEqual(["node-2", "node-0"])
  })
})
