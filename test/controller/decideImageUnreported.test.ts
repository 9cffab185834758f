// The pure decisions of ImageUnreported (issue 39): which nodes' daemons say their Node leaves a
// job's image out of status.images (daemon/unreportedTags.ts judges), when that is news, and which
// NodeImage changes wake the job.
import { describe, expect, it } from "vitest"
import type { Condition } from "../../src/api/meta.ts"
import type { NodeImage } from "../../src/api/nodeImage.ts"
import { unreportedNodes, unreportedVerdict } from "../../src/controller/imageUnreported/decide.ts"
import type { NodeReport } from "../../src/controller/imageUnreported/decide.ts"
import { jobChanged, ownersWhoseMarksChanged } from "../../src/controller/imageUnreported/watches.ts"
import { decodeImagePullJob } from "../../src/api/decode.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const succeeded = (extra: Record<string, unknown> = {}) =>
  ({ tag: "1", phase: "Succeeded", completionTime: "2026-12-05T12:00:00Z", ...extra }) as NodeReport["status"]

describe("unreportedNodes", () => {
  it("the nodes whose daemon marked the job's succeeded tag unreported; sorted", () => {
    expect(
      unreportedNodes([
        { node: "n3", status: succeeded({ unreported: true }) },
        { node: "n1", status: succeeded({ unreported: true }) },
        { node: "n2", status: succeeded() }
      ])
    ).toEqual(["n1", "n3"])
  })

  it("only succeeded tags: a mark left on another phase, no report, or no tag count for nothing", () => {
    const pulling = { tag: "1", phase: "Pulling", unreported: true } as NodeReport["status"]
    const failed = { tag: "1", phase: "Failed", unreported: true } as NodeReport["status"]
    expect(
      unreportedNodes([
        { node: "a", status: pulling },
        { node: "b", status: failed },
        { node: "c", status: undefined },
        { node: "d", status: null }
      ])
    ).toEqual([])
  })
})

describe("ownersWhoseMarksChanged: the NodeImage changes that wake a job", () => {
  const owner = (uid: string) => ({ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: uid, namespace: "default", uid })
  const nodeImage = (tags: ReadonlyArray<Record<string, unknown>>, owners = ["a"], version = 0): NodeImage =>
    ({
      metadata: { name: "n1" },
      spec: {
        images: { "team/small": { tags: [{ tag: "1", version, imagePullPolicy: "IfNotPresent", ownerReferences: owners.map(owner) }] } }
      },
      status: { desired: 1, pulling: 0, waiting: 0, succeeded: 1, failed: 0, imageStatuses: { "team/small": { tags } } }
    }) as unknown as NodeImage

  it("a mark that comes or goes wakes the tag's owners", () => {
    const plain = nodeImage([succeeded()!])
    const marked = nodeImage([succeeded({ unreported: true })!])
    expect([...ownersWhoseMarksChanged(plain, marked)]).toEqual(["a"])
    expect([...ownersWhoseMarksChanged(marked, plain)]).toEqual(["a"])
    // A tag pulled again (its new version Pulling): no longer left out.
    expect([...ownersWhoseMarksChanged(marked, nodeImage([{ tag: "1", phase: "Pulling", version: 1 }], ["a"], 1))]).toEqual(["a"])
  })

  it("a new owner or a new NodeImage wakes them; progress, or an outcome that leaves the mark as it was, does not", () => {
    const marked = nodeImage([succeeded({ unreported: true })!])
    expect([...ownersWhoseMarksChanged(marked, nodeImage([succeeded({ unreported: true })!], ["a", "b"]))].sort()).toEqual(["a", "b"])
    expect([...ownersWhoseMarksChanged(undefined, marked)]).toEqual(["a"])
    expect([...ownersWhoseMarksChanged(marked, undefined)]).toEqual(["a"])
    const pulling = (progress: number) => nodeImage([{ tag: "1", phase: "Pulling", progress }])
    expect([...ownersWhoseMarksChanged(pulling(10), pulling(60))]).toEqual([])
    expect([...ownersWhoseMarksChanged(pulling(60), nodeImage([succeeded()!]))]).toEqual([])
  })
})

describe("unreportedVerdict", () => {
  const image = '"team/small:1"'
  const condition = (verdict: ReturnType<typeof unreportedVerdict>): Condition | undefined =>
    verdict.condition === undefined ? undefined : { ...verdict.condition, lastTransitionTime: "2026-12-05T12:00:00Z" }

  it("True naming the first three nodes, with a Warning counting them all", () => {
    const verdict = unreportedVerdict(image, undefined, ["n1", "n2", "n3", "n4", "n5"])
    expect(verdict.condition).toMatchObject({ type: "ImageUnreported", status: "True", reason: "NodeStatusImagesFull" })
    expect(verdict.condition?.message).toContain("is on n1, n2, n3, ... but their Node status.images leaves it out")
    expect(verdict.condition?.message).toContain("(a kubelet lists only a node's largest images)")
    expect(verdict.event).toMatchObject({ type: "Warning", reason: "ImageUnreported" })
    expect(verdict.event?.message).toContain("is on 5 nodes (n1, n2, n3, and 2 more) but their Node status.images leaves it out")
  })

  it("one Warning per change of the nodes named, none while they stay (more nodes behind them included)", () => {
    const first = condition(unreportedVerdict(image, undefined, ["n1", "n2", "n3"]))!
    expect(unreportedVerdict(image, [first], ["n1", "n2", "n3"]).event).toBeUndefined()
    const withMore = condition(unreportedVerdict(image, [first], ["n1", "n2", "n3", "n4"]))!
    expect(unreportedVerdict(image, [first], ["n1", "n2", "n3", "n4"]).event).toBeDefined()
    expect(unreportedVerdict(image, [withMore], ["n1", "n2", "n3", "n4", "n5"]).event).toBeUndefined()
    expect(unreportedVerdict(image, [withMore], ["n0", "n1", "n2", "n3"]).event).toBeDefined()
    // Back to True after False: news again.
    expect(unreportedVerdict(image, [{ ...first, status: "False" }], ["n1", "n2", "n3"]).event).toBeDefined()
  })

  it("False, without a Warning, once no node leaves it out; nothing for a job that never had it", () => {
    const held = condition(unreportedVerdict(image, undefined, ["n1"]))!
    expect(unreportedVerdict(image, [held], [])).toEqual({
      condition: {
        type: "ImageUnreported",
        status: "False",
        reason: "ListedByNodes",
        message: "every node that pulled the image lists it in status.images"
      },
      event: undefined
    })
    expect(unreportedVerdict(image, undefined, [])).toEqual({ condition: undefined, event: undefined })
  })
})

describe("jobChanged: the job changes that wake it", () => {
  const stored = (raw: Record<string, unknown>) => {
    const object = {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImagePullJob",
      metadata: { name: "j", namespace: "default", generation: 1 },
      spec: { image: "nginx:1" },
      ...raw
    }
    return { raw: object as KubeObject, view: decodeImagePullJob(object) }
  }
  const a = stored({})

  it("coming, a new generation, its deletion, or its condition changed by another write; not its counters", () => {
    expect(jobChanged({ type: "added", current: a })).toEqual(["default/j"])
    expect(jobChanged({ type: "deleted", old: a })).toEqual([])
    expect(
      jobChanged({ type: "modified", old: a, current: stored({ metadata: { name: "j", namespace: "default", generation: 2 } }) })
    ).toEqual(["default/j"])
    expect(jobChanged({ type: "modified", old: a, current: stored({ status: { desired: 3, succeeded: 1 } }) })).toEqual([])
    const held = stored({
      status: { conditions: [{ type: "ImageUnreported", status: "True", lastTransitionTime: "2026-12-05T12:00:00Z" }] }
    })
    expect(jobChanged({ type: "modified", old: held, current: a })).toEqual(["default/j"])
  })
})
