// The pure half of pulling again after a credentials change (imagePullJob/credentialRenewal.ts and
// the job's decision): when a change counts, which failed nodes are due and for how long, and how
// the decision writes them within parallelism and registry room.
import { describe, expect, it } from "vitest"
import type { ImageTagStatus, NodeImage } from "../../src/api/nodeImage.ts"
import { renewedProviders } from "../../src/api/providerRenewal.ts"
import { changedCredentials, credentialsOf, renewed, retriesDue, retriesOf } from "../../src/controller/imagePullJob/credentialRenewal.ts"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import { type JobTask, nodeState } from "../../src/controller/imagePullJob/nodeTask.ts"
import { tagPullPolicy } from "../../src/controller/imagePullJob/tagPolicy.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
const copy = { namespace: "preheat-daemon-config", name: "default.registry" }
const task: JobTask = { image: "nginx", tag: "1.9.1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [copy] }
const never = makeJob({ image: "nginx:1.9.1", parallelism: 2, completionPolicy: { type: "Never" } })

/** A node with the job's tag at `version`, reported in `phase` (with `extra` status fields). */
const node = (
  name: string,
  phase: "Pulling" | "Succeeded" | "Failed" | undefined,
  version = 0,
  extra: Record<string, unknown> = {}
): NodeImage =>
  makeNodeImage(name, {
    images: {
      nginx: {
        pullSecrets: [copy],
        tags: [
          {
            tag: "1.9.1",
            version,
            ownerReferences: [owner],
            createdAt: "2026-12-01T10:00:00Z",
            pullPolicy: tagPullPolicy(never.spec, `${jobUid}/${name}`)
          }
        ]
      }
    },
    ...(phase === undefined ? {} : { statuses: { nginx: [{ tag: "1.9.1", phase, version, message: "401 Unauthorized", ...extra }] } })
  })

describe("credentials renewed", () => {
  const seen = (digests: Record<string, string>) => new Map(Object.entries(digests))

  it("by a copy whose data changed or one new to the job; not by one that went, nor on the first look", () => {
    expect(renewed(seen({ a: "1" }), seen({ a: "2" }))).toBe(true)
    expect(renewed(seen({ a: "1" }), seen({ a: "1", b: "1" }))).toBe(true)
    expect(renewed(seen({ a: "1", b: "1" }), seen({ a: "1" }))).toBe(false)
    expect(renewed(seen({ a: "1" }), seen({ a: "1" }))).toBe(false)
    // A new job, or a restarted controller: nothing says what the failed pulls used.
    expect(renewed(undefined, seen({ a: "1" }))).toBe(false)
  })

  it("are read from the copies the task points at that exist", () => {
    const refs = [copy, { namespace: "preheat-daemon-config", name: "default.missing" }]
    const credentials = credentialsOf(refs, (ref) => (ref.name === "default.registry" ? "d1" : undefined))
    expect([...credentials]).toEqual([["preheat-daemon-config/default.registry", "d1"]])
  })
})

describe("retries due", () => {
  const failed = [{ node: "a" }, { node: "b" }]
  const versions: Record<string, number> = { a: 3, b: 0 }

  it("a renewal makes every failed node due, at the version that failed", () => {
    expect([...retriesDue(new Map(), true, failed, (n) => versions[n])]).toEqual([
      ["a", 3],
      ["b", 0]
    ])
  })

  it("a node stays due while its failed tag is unchanged, and leaves once another version is written or it no longer fails", () => {
    const pending = new Map([
      ["a", 3],
      ["b", 0]
    ])
    expect([...retriesDue(pending, false, failed, (n) => versions[n])]).toEqual([...pending])
    // a's retry was written (version 4) and failed again: it waits for the next renewal.
    expect([...retriesDue(pending, false, failed, (n) => (n === "a" ? 4 : versions[n]))]).toEqual([["b", 0]])
    // b succeeded meanwhile.
    expect([...retriesDue(pending, false, [{ node: "a" }], (n) => versions[n])]).toEqual([["a", 3]])
  })
})

/** A failed node due since the pull secrets changed. */
const bySecrets = (node: NodeImage) => ({ node, secrets: true, providers: [] })

describe("the decision with failed nodes due for a retry", () => {
  it("gives their tag its next version, created now, within parallelism after the nodes without a tag; they count as active", () => {
    const targets = [node("a", "Failed", 2), makeNodeImage("b"), node("c", "Failed"), node("d", "Failed")]
    const decision = decideImagePullJob({
      job: never,
      task,
      targets,
      stale: [],
      now: t0,
      propagateEdits: false,
      credentialRetries: [targets[0]!, targets[2]!, targets[3]!].map(bySecrets)
    })
    expect(decision.writes.map((w) => w.node)).toEqual(["b", "a"])
    const retried = decision.writes[1]!.entry!
    expect(retried.tags).toEqual([expect.objectContaining({ tag: "1.9.1", version: 3, createdAt: "2026-12-02T10:00:00Z" })])
    expect(retried.pullSecrets).toEqual([copy])
    expect(decision.status).toMatchObject({ active: 2, failed: 2, failedNodes: ["c", "d"] })
    expect(decision.events.find((e) => e.reason === "CredentialsChanged")?.message).toBe(
      'pull secrets changed: pulling "nginx:1.9.1" again on 1 node where it failed'
    )
  })

  it("waits for registry room, and says so as for the nodes without a tag", () => {
    const targets = [node("a", "Failed"), node("b", "Failed")]
    const decide = (room: number) =>
      decideImagePullJob({
        job: never,
        task,
        targets,
        stale: [],
        now: t0,
        propagateEdits: false,
        registry: { registry: "docker.io", limit: 1, room },
        credentialRetries: targets.map(bySecrets)
      })
    expect(decide(0)).toMatchObject({ writes: [], heldBack: 2 })
    const one = decide(1)
    expect(one.writes.map((w) => w.node)).toEqual(["a"])
    expect(one.heldBack).toBe(1)
  })

  it("retries nothing once an Always job is past its deadline", () => {
    const job = makeJob(
      { image: "nginx:1.9.1", parallelism: 2, completionPolicy: { type: "Always", activeDeadlineSeconds: 1200 } },
      { status: { startTime: "2026-12-02T09:00:00Z" } }
    )
    const targets = [node("a", "Failed"), node("b", "Pulling")]
    const decision = decideImagePullJob({
      job,
      task,
      targets,
      stale: [],
      now: t0,
      propagateEdits: false,
      credentialRetries: [bySecrets(targets[0]!)]
    })
    expect(decision.writes).toEqual([])
    expect(decision.status.failedNodes).toEqual(["a", "b"])
  })
})

describe("a credential provider answering anew", () => {
  const renewedAt = "2026-12-02T09:00:00Z"
  const asked = (renewed: boolean) => ({
    credentialProviders: [{ name: "ecr", ...(renewed ? { renewedAt } : {}) }, { name: "other" }]
  })

  it("is read from the failed tag's status, at the spec's version only", () => {
    expect(nodeState(node("a", "Failed", 0, asked(true)), task)).toMatchObject({ phase: "failed", renewedBy: ["ecr"] })
    expect(nodeState(node("b", "Failed", 0, asked(false)), task)).toMatchObject({ phase: "failed", renewedBy: [] })
    expect(nodeState(node("c", "Failed"), task)).toMatchObject({ phase: "failed", renewedBy: [] })
    // Written by hand into a shape the schema would refuse: no mark.
    const handWritten = { tag: "1.9.1", phase: "Failed", credentialProviders: [{ name: 1, renewedAt }, "ecr", { name: "gcr", renewedAt }] }
    expect(renewedProviders(handWritten as unknown as ImageTagStatus)).toEqual(["gcr"])
    expect(renewedProviders({ tag: "1.9.1", phase: "Pulling", credentialProviders: [{ name: "ecr", renewedAt }] })).toEqual([])
    // A mark on a version before the spec's is not the current tag's.
    const moved = makeNodeImage("e", {
      images: { nginx: { tags: [{ tag: "1.9.1", version: 1, ownerReferences: [owner], createdAt: "2026-12-01T10:00:00Z" }] } },
      statuses: { nginx: [{ tag: "1.9.1", phase: "Failed", version: 0, ...asked(true) }] }
    })
    expect(nodeState(moved, task)).toEqual({ phase: "active" })
  })

  it("makes a failed node due, beside those due for the pull secrets, in target order", () => {
    const failed = [
      { node: "a", renewedBy: [] },
      { node: "b", renewedBy: ["ecr"] },
      { node: "c", renewedBy: ["ecr"] }
    ]
    expect(retriesOf(failed, new Map())).toEqual([
      { node: "b", secrets: false, providers: ["ecr"] },
      { node: "c", secrets: false, providers: ["ecr"] }
    ])
    expect(
      retriesOf(
        failed,
        new Map([
          ["c", 0],
          ["a", 0]
        ])
      )
    ).toEqual([
      { node: "a", secrets: true, providers: [] },
      { node: "b", secrets: false, providers: ["ecr"] },
      { node: "c", secrets: true, providers: ["ecr"] }
    ])
  })

  it("is named in the event, as pull secrets are", () => {
    const retry = (secrets: boolean, providers: ReadonlyArray<string>) => ({ node: "n", secrets, providers })
    expect(changedCredentials([retry(true, [])])).toBe("pull secrets")
    expect(changedCredentials([retry(false, ["ecr"]), retry(false, ["ecr"])])).toBe('the answer of credential provider "ecr"')
    expect(changedCredentials([retry(false, ["gcr"]), retry(true, ["ecr"])])).toBe(
      'pull secrets and the answers of credential providers "ecr", "gcr"'
    )
    expect(changedCredentials([retry(false, ["a", "b", "c", "d", "e"])])).toBe(
      'the answers of credential providers "a", "b", "c" and 2 more'
    )
  })

  it("gives the marked nodes their tag's next version, saying which provider answered anew", () => {
    const targets = [node("a", "Failed", 4, asked(true)), node("b", "Succeeded")]
    const decision = decideImagePullJob({
      job: never,
      task,
      targets,
      stale: [],
      now: t0,
      propagateEdits: false,
      credentialRetries: [{ node: targets[0]!, secrets: false, providers: ["ecr"] }]
    })
    expect(decision.writes.map((w) => [w.node, w.entry?.tags[0]?.version])).toEqual([["a", 5]])
    expect(decision.status).toMatchObject({ active: 1, succeeded: 1, failed: 0 })
    expect(decision.events.find((e) => e.reason === "CredentialsChanged")?.message).toBe(
      'the answer of credential provider "ecr" changed: pulling "nginx:1.9.1" again on 1 node where it failed'
    )
  })
})
