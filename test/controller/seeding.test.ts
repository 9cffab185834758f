/**
 * Seed-first fan-out (issue 39): the annotation and the controller's default (seedNodes.ts), the
 * phase a job is in (seedingCondition.ts), and the job's decision with them: the seeds pull
 * first, the others once they succeeded, the status message and the `Seeded` condition say which
 * phase, and a job past seeding stays past it.
 */
import { describe, expect, it } from "vitest"
import type { ImagePullJob } from "../../src/api/imagePullJob.ts"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import type { JobDecision } from "../../src/controller/imagePullJob/decide.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { parseSeedCount, resolveSeeds, seedNodesOf } from "../../src/controller/imagePullJob/seedNodes.ts"
import type { SeedNodes } from "../../src/controller/imagePullJob/seedNodes.ts"
import { seedingVerdict } from "../../src/controller/imagePullJob/seedingCondition.ts"
import { decideImageListPullJob } from "../../src/controller/imageListPullJob/decide.ts"
import { decodeImageListPullJob } from "../../src/api/decode.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"
import { Result } from "effect"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const task: JobTask = { image: "app", tag: "v1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [] }
const annotation = "preheat.kruise.io/seed-nodes"

/** A target: without the job's tag, or with it at `phase` (written, not reported: "Pulling" without a status). */
const node = (name: string, phase?: "Pulling" | "Succeeded" | "Failed", version = 0): NodeImage =>
  phase === undefined
    ? makeNodeImage(name)
    : makeNodeImage(name, {
        images: { app: { tags: [{ tag: "v1", version, ownerReferences: [owner], createdAt: "2026-12-02T10:00:00Z" }] } },
        statuses: { app: [{ tag: "v1", phase, version }] }
      })

const nodes = (n: number, phase?: "Pulling" | "Succeeded" | "Failed") =>
  Array.from({ length: n }, (_, i) => node(`node-${String(i).padStart(2, "0")}`, phase))

const job = (spec: Record<string, unknown> = {}, status?: unknown): ImagePullJob =>
  makeJob({ image: "app:v1", parallelism: 10, ...spec }, status === undefined ? {} : { status })

const on = (count: number | `${number}%`): SeedNodes => ({ _tag: "On", count })

const decide = (j: ImagePullJob, targets: ReadonlyArray<NodeImage>, seedNodes: SeedNodes, now = t0): JobDecision =>
  decideImagePullJob({ job: j, task, targets, stale: [], now, propagateEdits: false, seedNodes })

/** The status a decision wrote, as the next reconcile reads it. */
const withStatus = (j: ImagePullJob, decision: JobDecision): ImagePullJob => ({ ...j, status: decision.status })

const started = (decision: JobDecision) => decision.writes.map((w) => w.node)
const seededOf = (decision: JobDecision) => decision.status.conditions?.find((c) => c.type === "Seeded")

describe("the seed-nodes annotation and --seed-nodes", () => {
  it("reads a count or a percentage, 0 turning seeding off; anything else is refused in words", () => {
    expect(["3", "0", "25%", "0%", "100%"].map(parseSeedCount)).toEqual([3, 0, "25%", "0%", "100%"])
    for (const bad of ["", "-1", "1.5", "101%", " 2", "2 ", "two", "01", "1e3", "50 %"]) expect(parseSeedCount(bad)).toBeUndefined()
  })

  it("takes the job's annotation over the controller's default; 0 turns the default off for the job", () => {
    expect(seedNodesOf(undefined, undefined)).toEqual({ _tag: "Off" })
    expect(seedNodesOf({}, 2)).toEqual({ _tag: "On", count: 2 })
    expect(seedNodesOf({ [annotation]: "10%" }, 2)).toEqual({ _tag: "On", count: "10%" })
    expect(seedNodesOf({ [annotation]: "0" }, 2)).toEqual({ _tag: "Off" })
    expect(seedNodesOf({}, "0%")).toEqual({ _tag: "Off" })
    expect(seedNodesOf({ [annotation]: "many" }, 2)).toEqual({
      _tag: "Invalid",
      message:
        'annotation preheat.kruise.io/seed-nodes: "many" is not a count of nodes (0 to 999999999) or a percentage of the job\'s nodes (0% to 100%): the job pulls without seeding'
    })
  })

  it("resolves a percentage of the targets rounded up, and never more seeds than targets", () => {
    expect([resolveSeeds("10%", 50), resolveSeeds("1%", 3), resolveSeeds("50%", 5), resolveSeeds(5, 3), resolveSeeds("10%", 0)]).toEqual([
      5, 1, 3, 3, 0
    ])
  })
})

describe("the Seeded condition", () => {
  const verdict = (input: Partial<Parameters<typeof seedingVerdict>[0]>) =>
    seedingVerdict({ seedNodes: on(2), previous: undefined, repull: false, desired: 5, succeeded: 0, image: '"app:v1"', ...input })

  it("is False while the seeds pull, True with a Normal event once they succeeded", () => {
    expect(verdict({})).toEqual({
      seeds: 2,
      condition: { type: "Seeded", status: "False", reason: "Seeding", message: 'pulling "app:v1" on 2 nodes first, then on the other 3' },
      event: undefined
    })
    expect(verdict({ succeeded: 2 })).toEqual({
      seeds: undefined,
      condition: {
        type: "Seeded",
        status: "True",
        reason: "SeedsPulled",
        message: '"app:v1" pulled on 2 nodes first, then on the other 3'
      },
      event: { type: "Normal", reason: "Seeded", message: 'pulled "app:v1" on 2 nodes: starting the other 3' }
    })
  })

  it("stays True once it was: no seeding again for new nodes or a Never job's next pulls, unless the job starts over", () => {
    const seeded = [{ type: "Seeded", status: "True" as const, reason: "SeedsPulled", lastTransitionTime: "2026-12-02T09:00:00Z" }]
    expect(verdict({ previous: seeded, succeeded: 0, desired: 9 })).toEqual({ seeds: undefined, condition: undefined, event: undefined })
    expect(verdict({ previous: seeded, repull: true })).toMatchObject({ seeds: 2, condition: { status: "False", reason: "Seeding" } })
  })

  it("with as many seeds as targets or more, every target is a seed: no fan-out phase", () => {
    expect(verdict({ seedNodes: on(7), desired: 3 })).toMatchObject({
      seeds: 3,
      condition: { reason: "Seeding", message: 'pulling "app:v1" on 3 nodes, every target a seed' }
    })
  })

  it("says nothing for a job without targets, or that never seeded", () => {
    expect(verdict({ desired: 0 })).toEqual({ seeds: undefined, condition: undefined, event: undefined })
    expect(verdict({ seedNodes: { _tag: "Off" } })).toEqual({ seeds: undefined, condition: undefined, event: undefined })
  })

  it("turns False with SeedingOff when the annotation goes before the seeds succeeded", () => {
    const seeding = [{ type: "Seeded", status: "False" as const, reason: "Seeding", lastTransitionTime: "2026-12-02T09:00:00Z" }]
    expect(verdict({ seedNodes: { _tag: "Off" }, previous: seeding }).condition).toMatchObject({ status: "False", reason: "SeedingOff" })
  })

  it("reports a bad value with a Warning when it first shows or changes, not on every reconcile", () => {
    const bad: SeedNodes = { _tag: "Invalid", message: "annotation preheat.kruise.io/seed-nodes: bad" }
    const first = verdict({ seedNodes: bad })
    expect(first).toEqual({
      seeds: undefined,
      condition: { type: "Seeded", status: "False", reason: "InvalidSeedNodes", message: bad.message },
      event: { type: "Warning", reason: "InvalidSeedNodes", message: bad.message }
    })
    const previous = [{ ...first.condition!, lastTransitionTime: "2026-12-02T09:00:00Z" }]
    expect(verdict({ seedNodes: bad, previous }).event).toBeUndefined()
    expect(verdict({ seedNodes: { _tag: "Invalid", message: "other" }, previous }).event).toMatchObject({ reason: "InvalidSeedNodes" })
  })
})

describe("a job that seeds", () => {
  it("starts its seeds first, says it seeds, then starts the others within parallelism once they succeeded", () => {
    const j = job({ parallelism: 4 })
    const first = decide(j, nodes(6), on(2))
    expect(started(first)).toEqual(["node-00", "node-01"])
    expect(first.status.message).toBe("job is seeding, 0 of 2 seed nodes pulled, progress 0.0%")
    expect(seededOf(first)).toMatchObject({ status: "False", reason: "Seeding" })

    // One seed done, the other pulling: nobody else starts.
    const targets = [node("node-00", "Succeeded"), node("node-01", "Pulling"), ...nodes(6).slice(2)]
    const waiting = decide(withStatus(j, first), targets, on(2))
    expect(started(waiting)).toEqual([])
    expect(waiting.status.message).toBe("job is seeding, 1 of 2 seed nodes pulled, progress 16.7%")

    const seeded = decide(withStatus(j, waiting), [node("node-00", "Succeeded"), node("node-01", "Succeeded"), ...nodes(6).slice(2)], on(2))
    expect(started(seeded)).toEqual(["node-02", "node-03", "node-04", "node-05"])
    expect(seeded.status.message).toBe("job is running, progress 33.3%")
    expect(seededOf(seeded)).toMatchObject({ status: "True", reason: "SeedsPulled" })
    expect(seeded.events).toContainEqual({ type: "Normal", reason: "Seeded", message: 'pulled "app:v1" on 2 nodes: starting the other 4' })
  })

  it("pulls as before without seeding (the same job, the same nodes)", () => {
    const plain = decide(job({ parallelism: 4 }), nodes(6), { _tag: "Off" })
    expect(started(plain)).toEqual(["node-00", "node-01", "node-02", "node-03"])
    expect(plain.status.message).toBe("job is running, progress 0.0%")
    expect(seededOf(plain)).toBeUndefined()
  })

  it("replaces a failed seed (after its retries) by the next target", () => {
    const j = job()
    const first = decide(j, nodes(4), on(1))
    expect(started(first)).toEqual(["node-00"])
    const replaced = decide(withStatus(j, first), [node("node-00", "Failed"), ...nodes(4).slice(1)], on(1))
    expect(started(replaced)).toEqual(["node-01"])
    expect(replaced.status.message).toBe("job is seeding, 0 of 1 seed nodes pulled, progress 25.0%")
    expect(replaced.events).toContainEqual(expect.objectContaining({ type: "Warning", reason: "NodeFailed" }))
  })

  it("counts nodes that had the image already (IfNotPresent, succeeded at once) as seeds", () => {
    // Such a node reports Succeeded as soon as it gets the tag: the seeding ends at the next decision.
    const j = job()
    const targets = [node("node-00", "Succeeded"), ...nodes(4).slice(1)]
    const decision = decide(withStatus(j, decide(j, nodes(4), on(1))), targets, on(1))
    expect(started(decision)).toEqual(["node-01", "node-02", "node-03"])
    expect(seededOf(decision)).toMatchObject({ status: "True" })
  })

  it("starts the seeds within a smaller parallelism", () => {
    const j = job({ parallelism: 2 })
    expect(started(decide(j, nodes(8), on(5)))).toEqual(["node-00", "node-01"])
    const next = decide(job({ parallelism: 2 }), [...nodes(2, "Succeeded"), ...nodes(8).slice(2)], on(5))
    expect(started(next)).toEqual(["node-02", "node-03"])
    expect(next.status.message).toBe("job is seeding, 2 of 5 seed nodes pulled, progress 25.0%")
  })

  it("with more seeds than targets, pulls on every target within parallelism and completes without a fan-out", () => {
    const j = job({ parallelism: 10 })
    const first = decide(j, nodes(3), on(5))
    expect(started(first)).toEqual(["node-00", "node-01", "node-02"])
    const done = decide(withStatus(j, first), nodes(3, "Succeeded"), on(5))
    expect(done.status.completionTime).toBeDefined()
    expect(seededOf(done)).toMatchObject({ status: "True", message: 'every target was a seed: "app:v1" pulled on 3 nodes' })
  })

  it("does not seed again once past seeding: a Never job's new node, or its next daily pull, starts at once", () => {
    const j = job({ parallelism: 4, completionPolicy: { type: "Never" } })
    const seeded = decide(withStatus(j, decide(j, nodes(3), on(1))), [node("node-00", "Succeeded"), ...nodes(3).slice(1)], on(1))
    expect(seededOf(seeded)?.status).toBe("True")
    // Later every tag expired (the daily pull again) and a node joined: all start within parallelism.
    const later = decide(withStatus(j, seeded), nodes(4), on(1))
    expect(started(later)).toEqual(["node-00", "node-01", "node-02", "node-03"])
    expect(later.status.message).toBe("job is running, progress 0.0%")
  })

  it("seeds again when an Always-policy job starts over on a new generation", () => {
    const spec = { imagePullPolicy: "Always", parallelism: 4 }
    const j = job(spec)
    const done = decide(withStatus(j, decide(j, nodes(3), on(1))), [node("node-00", "Succeeded"), ...nodes(3).slice(1)], on(1))
    const edited = { ...withStatus(j, done), metadata: { ...j.metadata, generation: 2 } }
    const repull = decideImagePullJob({
      job: edited,
      task: { ...task, imagePullPolicy: "Always" },
      targets: [node("node-00", "Succeeded"), ...nodes(3).slice(1)],
      stale: [],
      now: t0,
      propagateEdits: false,
      seedNodes: on(1)
    })
    expect(seededOf(repull)).toMatchObject({ status: "False", reason: "Seeding" })
    // node-00's tag is let go (written again later), and one node only gets the tag: the new seed.
    const given = repull.writes.filter((w) => w.entry?.tags.some((t) => t.ownerReferences?.some((o) => o.uid === jobUid)))
    expect(given).toHaveLength(1)
    expect(repull.writes.map((w) => w.node)).toContain("node-00")
  })

  it("lets the deadline win: a job past it while seeding ends, and says it never got past seeding", () => {
    const j = job({ completionPolicy: { type: "Always", activeDeadlineSeconds: 60 }, pullPolicy: { timeoutSeconds: 30, backoffLimit: 3 } })
    const first = decide(j, nodes(3), on(1))
    const late = decide(withStatus(j, first), [node("node-00", "Pulling"), ...nodes(3).slice(1)], on(1), t0 + 61_000)
    expect(late.status.message).toBe("job exceeds activeDeadlineSeconds")
    expect(started(late)).toEqual([])
    expect(seededOf(late)).toMatchObject({ status: "False", reason: "NotSeeded" })
  })

  it("pulls without seeding on a bad annotation value, and says so", () => {
    const decision = decide(job({ parallelism: 3 }), nodes(4), { _tag: "Invalid", message: "annotation preheat.kruise.io/seed-nodes: bad" })
    expect(started(decision)).toEqual(["node-00", "node-01", "node-02"])
    expect(seededOf(decision)).toMatchObject({ status: "False", reason: "InvalidSeedNodes" })
    expect(decision.events).toContainEqual({
      type: "Warning",
      reason: "InvalidSeedNodes",
      message: "annotation preheat.kruise.io/seed-nodes: bad"
    })
  })
})

describe("an ImageListPullJob that seeds", () => {
  it("gives its children its seed-nodes annotation", () => {
    const decoded = decodeImageListPullJob({
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImageListPullJob",
      metadata: { name: "list", namespace: "default", uid: "uid-list", annotations: { [annotation]: "2" } },
      spec: { images: ["a:1", "b:1"] }
    })
    if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
    const { create } = decideImageListPullJob(decoded.success, [], t0)
    expect(create.map((c) => c.metadata.annotations)).toEqual([{ [annotation]: "2" }, { [annotation]: "2" }])
  })
})
