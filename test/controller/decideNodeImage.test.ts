import { describe, expect, it } from "vitest"
import { decideNodeImage, tagFailureMessage } from "../../src/controller/nodeImage/decide.ts"
import type { NodeImageInput } from "../../src/controller/nodeImage/decide.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { makeNodeImage } from "../support/fixtures.ts"

const t0 = Date.parse("2026-12-02T10:00:00Z")
const settings = { readyDelayMs: 30_000, unresponsiveMs: 600_000 }
const readyNode = (since: string, labels: Record<string, string> = { zone: "a" }): KubeObject => ({
  metadata: { name: "node-1", labels },
  status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: since }] }
})
const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "j", namespace: "default", uid: "u1" }

const decide = (over: Partial<NodeImageInput>) =>
  decideNodeImage({
    name: "node-1",
    node: readyNode("2026-12-02T09:00:00Z"),
    nodeImage: undefined,
    warming: false,
    jobExists: () => true,
    jobSecrets: () => undefined,
    now: t0,
    settings,
    parseTime: Date.parse,
    ...over
  })

describe("decideNodeImage", () => {
  it("creates the NodeImage with the Node's labels once it has been Ready for the delay", () => {
    expect(decide({})).toEqual({ action: "create", labels: { zone: "a" } })
    expect(decide({ node: readyNode("2026-12-02T09:59:50Z") })).toEqual({ action: "none", wakeAt: t0 + 20_000 })
  })

  it("creates it as soon as a Node held by the startup taint is Ready: it takes no pods until warm", () => {
    expect(decide({ node: readyNode("2026-12-02T09:59:59Z"), warming: true })).toEqual({ action: "create", labels: { zone: "a" } })
    const notReady: KubeObject = { metadata: { name: "node-1" }, status: { conditions: [{ type: "Ready", status: "False" }] } }
    expect(decide({ node: notReady, warming: true })).toEqual({ action: "none", wakeAt: undefined })
  })

  it("waits for a Node that is not Ready", () => {
    const node: KubeObject = { metadata: { name: "node-1" }, status: { conditions: [{ type: "Ready", status: "False" }] } }
    expect(decide({ node })).toEqual({ action: "none", wakeAt: undefined })
  })

  it("deletes the NodeImage when the Node is gone", () => {
    expect(decide({ node: undefined, nodeImage: makeNodeImage("node-1") })).toEqual({ action: "delete" })
  })

  it("leaves a fake NodeImage (upstream's e2e label) without a Node in place, its labels its own, its tags still tended", () => {
    const fake = (labels: Record<string, string>) =>
      makeNodeImage("fake-nodeimage", {
        labels,
        images: { nginx: { tags: [{ tag: "1", ownerReferences: [owner], createdAt: "2026-12-02T09:00:00Z" }] } }
      })
    const kept = decide({
      name: "fake-nodeimage",
      node: undefined,
      nodeImage: fake({ "apps.kruise.io/fake-nodeimage": "true", pool: "x" })
    })
    expect(kept).toMatchObject({ action: "update", labels: undefined, images: new Map() })
    expect(kept.action === "update" && kept.failures).toEqual([
      { image: "nginx", tag: "1", owners: [owner], message: "node has not responded for a long time" }
    ])
    // Upstream tests only that the key is there.
    expect(decide({ node: undefined, nodeImage: fake({ "apps.kruise.io/fake-nodeimage": "" }) }).action).toBe("update")
    expect(decide({ node: undefined, nodeImage: fake({ "apps.kruise.io/fake": "true" }) })).toEqual({ action: "delete" })
  })

  it("names a failed tag's image as it is pulled: a digest after @, never name:sha256:...", () => {
    const digest = `sha256:${"a".repeat(64)}`
    const failure = (tag: string) => ({ image: "nginx", tag, owners: [owner], message: "node has not responded for a long time" })
    expect(tagFailureMessage(failure("1.25"), "n2")).toBe('image "nginx:1.25" on node n2: node has not responded for a long time')
    expect(tagFailureMessage(failure(digest), "n2")).toBe(`image "nginx@${digest}" on node n2: node has not responded for a long time`)
  })

  it("keeps labels equal to the Node's", () => {
    const nodeImage = makeNodeImage("node-1", { labels: { zone: "b", old: "x" } })
    expect(decide({ nodeImage })).toMatchObject({ action: "update", labels: { zone: "a", old: null } })
  })

  it("fills in createdAt of a hand-written tag and never drops it for lacking one", () => {
    const nodeImage = makeNodeImage("node-1", {
      labels: { zone: "a" },
      images: { ubuntu: { tags: [{ tag: "latest", pullPolicy: { ttlSecondsAfterFinished: 300 } }] } }
    })
    const decision = decide({ nodeImage })
    expect(decision.action).toBe("update")
    if (decision.action !== "update") return
    expect(decision.images.get("ubuntu")?.tags[0]).toMatchObject({ tag: "latest", createdAt: "2026-12-02T10:00:00Z" })
  })

  it("drops a tag whose owner jobs are all gone, and the image with it", () => {
    const nodeImage = makeNodeImage("node-1", {
      labels: { zone: "a" },
      images: { nginx: { tags: [{ tag: "1", ownerReferences: [owner], createdAt: "2026-12-02T09:00:00Z" }] } }
    })
    const decision = decide({ nodeImage, jobExists: () => false })
    expect(decision.action === "update" && [...decision.images]).toEqual([["nginx", undefined]])
  })

  it("drops secret references no owning job uses any more, and keeps them where that cannot be told", () => {
    const copy = (name: string) => ({ namespace: "preheat-daemon-config", name })
    const tag = (uid?: string) => ({
      tag: "1",
      createdAt: "2026-12-02T09:59:00Z",
      ...(uid === undefined ? {} : { ownerReferences: [{ ...owner, uid }] })
    })
    const nodeImage = (tags: ReadonlyArray<ReturnType<typeof tag>>) =>
      makeNodeImage("node-1", { labels: { zone: "a" }, images: { nginx: { pullSecrets: [copy("a"), copy("b")], tags } } })
    const secrets: Record<string, ReadonlyArray<ReturnType<typeof copy>>> = { u1: [copy("a")], u2: [], u3: [copy("b")] }
    const jobSecrets = (uid: string) => secrets[uid]
    const pruned = decide({ nodeImage: nodeImage([tag("u1")]), jobSecrets })
    expect(pruned.action === "update" && pruned.images.get("nginx")?.pullSecrets).toEqual([copy("a")])
    const none = decide({ nodeImage: nodeImage([tag("u2")]), jobSecrets })
    expect(none.action === "update" && none.images.get("nginx")).toMatchObject({ tags: [tag("u2")] })
    expect(none.action === "update" && none.images.get("nginx")).not.toHaveProperty("pullSecrets")
    // Two jobs on two tags of the image: the union of what they use.
    expect(decide({ nodeImage: nodeImage([tag("u1"), { ...tag("u3"), tag: "2" }]), jobSecrets })).toEqual({
      action: "none",
      wakeAt: expect.any(Number)
    })
    // A hand-written tag, or an owner whose secrets are unknown: nothing is dropped.
    expect(decide({ nodeImage: nodeImage([tag("u1"), { ...tag(), tag: "2" }]), jobSecrets })).toEqual({
      action: "none",
      wakeAt: expect.any(Number)
    })
    expect(decide({ nodeImage: nodeImage([tag("u9")]), jobSecrets })).toEqual({ action: "none", wakeAt: expect.any(Number) })
  })

  it("drops a tag once its TTL passed since it finished, and wakes for it before", () => {
    const images = {
      nginx: {
        tags: [{ tag: "1", ownerReferences: [owner], createdAt: "2026-12-02T09:00:00Z", pullPolicy: { ttlSecondsAfterFinished: 600 } }]
      }
    }
    const statuses = { nginx: [{ tag: "1", phase: "Succeeded", version: 0, completionTime: "2026-12-02T09:55:00Z" }] }
    const nodeImage = makeNodeImage("node-1", { labels: { zone: "a" }, images, statuses })
    expect(decide({ nodeImage })).toEqual({ action: "none", wakeAt: Date.parse("2026-12-02T10:05:00Z") })
    const later = decide({ nodeImage, now: Date.parse("2026-12-02T10:05:00Z") })
    expect(later.action === "update" && [...later.images]).toEqual([["nginx", undefined]])
  })

  it("marks a tag the daemon never answered Failed after the grace", () => {
    const images = { nginx: { tags: [{ tag: "1", ownerReferences: [owner], createdAt: "2026-12-02T09:50:00Z" }] } }
    const nodeImage = makeNodeImage("node-1", { labels: { zone: "a" }, images })
    expect(decide({ nodeImage, now: t0 - 1 })).toEqual({ action: "none", wakeAt: t0 })
    const decision = decide({ nodeImage })
    expect(decision).toMatchObject({
      action: "update",
      failures: [{ image: "nginx", tag: "1", owners: [owner], message: "node has not responded for a long time" }]
    })
  })

  it("marks a tag still pulling past its deadline plus the grace Failed", () => {
    const images = {
      nginx: {
        tags: [{ tag: "1", ownerReferences: [owner], createdAt: "2026-12-02T09:00:00Z", pullPolicy: { activeDeadlineSeconds: 1200 } }]
      }
    }
    const statuses = { nginx: [{ tag: "1", phase: "Pulling", version: 0 }] }
    const nodeImage = makeNodeImage("node-1", { labels: { zone: "a" }, images, statuses })
    expect(decide({ nodeImage, now: Date.parse("2026-12-02T09:29:59Z") }).action).toBe("none")
    expect(decide({ nodeImage, now: Date.parse("2026-12-02T09:30:00Z") })).toMatchObject({
      action: "update",
      failures: [{ message: "pulling exceeds the activeDeadlineSeconds" }]
    })
  })
})
