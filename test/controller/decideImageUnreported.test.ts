// The pure decisions of ImageUnreported (issue 39): which nodes leave a job's image out of their
// status.images (not a late kubelet, not a list that holds everything), and when that is news.
import { describe, expect, it } from "vitest"
import type { Condition } from "../../src/api/meta.ts"
import { reportedImages } from "../../src/api/nodeStatusImages.ts"
import { unreportedNodes, unreportedVerdict } from "../../src/controller/imageUnreported/decide.ts"
import type { NodeReport } from "../../src/controller/imageUnreported/decide.ts"
import { jobChanged } from "../../src/controller/imageUnreported/watches.ts"
import { decodeImagePullJob } from "../../src/api/decode.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const minute = 60_000
const now = Date.parse("2026-12-05T12:00:00Z")
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")
const digest = `sha256:${"e".repeat(64)}`

const listing = (count: number, ...extra: ReadonlyArray<string>) =>
  reportedImages({
    status: { images: [...Array.from({ length: count }, (_, i) => `big/image-${i}:1`), ...extra].map((name) => ({ names: [name] })) }
  })

const report = (node: string, list: ReturnType<typeof listing>, status: NodeReport["status"]): NodeReport => ({
  node,
  status,
  reported: () => list
})
const succeeded = (ago: number, extra: Record<string, unknown> = {}) =>
  ({ tag: "1", phase: "Succeeded", completionTime: at(now - ago), ...extra }) as NodeReport["status"]

describe("unreportedNodes", () => {
  const judge = (reports: ReadonlyArray<NodeReport>, max = 50) => unreportedNodes(reports, "team/small", "1", now, 2 * minute, max)

  it("a node whose pull succeeded long enough ago and whose full list leaves the image out; sorted", () => {
    expect(judge([report("n2", listing(50), succeeded(5 * minute)), report("n1", listing(50), succeeded(3 * minute))])).toEqual({
      nodes: ["n1", "n2"],
      wakeAt: undefined
    })
  })

  it("not a node that lists it, by tag (normalised) or by the digest its pull resolved", () => {
    expect(judge([report("n1", listing(50, "docker.io/team/small:1"), succeeded(5 * minute))]).nodes).toEqual([])
    const byDigest = listing(50, `docker.io/team/small@${digest}`)
    expect(judge([report("n1", byDigest, succeeded(5 * minute, { digest }))]).nodes).toEqual([])
  })

  it("not a node whose list is shorter than the cap: it holds every image there, the kubelet is only late", () => {
    expect(judge([report("n1", listing(49), succeeded(30 * minute))]).nodes).toEqual([])
    expect(judge([report("n1", listing(49), succeeded(30 * minute))], 10).nodes).toEqual(["n1"])
  })

  it("not yet a node whose pull just succeeded: judged once the grace is over", () => {
    expect(judge([report("n1", listing(50), succeeded(30_000)), report("n2", listing(50), succeeded(90_000))])).toEqual({
      nodes: [],
      wakeAt: now + 30_000
    })
  })

  it("only succeeded tags; and no node at all with a cap of -1 (every image listed) or 0 (none)", () => {
    const pulling = { tag: "1", phase: "Pulling" } as NodeReport["status"]
    const failed = { tag: "1", phase: "Failed", completionTime: at(now - 5 * minute) } as NodeReport["status"]
    expect(judge([report("a", listing(50), pulling), report("b", listing(50), failed), report("c", listing(50), null)]).nodes).toEqual([])
    const long = [report("n1", listing(60), succeeded(5 * minute))]
    expect(judge(long, -1)).toEqual({ nodes: [], wakeAt: undefined })
    expect(judge(long, 0)).toEqual({ nodes: [], wakeAt: undefined })
  })

  it("reads a node's list only where the pull succeeded", () => {
    let reads = 0
    const counted = (status: NodeReport["status"]): NodeReport => ({
      node: "n",
      status,
      reported: () => {
        reads++
        return listing(50)
      }
    })
    judge([counted({ tag: "1", phase: "Pulling" } as NodeReport["status"]), counted(null), counted(succeeded(5 * minute))])
    expect(reads).toBe(1)
  })
})

describe("unreportedVerdict", () => {
  const image = '"team/small:1"'
  const condition = (verdict: ReturnType<typeof unreportedVerdict>): Condition | undefined =>
    verdict.condition === undefined ? undefined : { ...verdict.condition, lastTransitionTime: "2026-12-05T12:00:00Z" }

  it("True naming the first three nodes, with a Warning counting them all", () => {
    const verdict = unreportedVerdict(image, undefined, ["n1", "n2", "n3", "n4", "n5"], 50)
    expect(verdict.condition).toMatchObject({ type: "ImageUnreported", status: "True", reason: "NodeStatusImagesFull" })
    expect(verdict.condition?.message).toContain("is on n1, n2, n3, ... but their Node status.images leaves it out")
    expect(verdict.condition?.message).toContain("a kubelet lists a node's 50 largest images")
    expect(verdict.event).toMatchObject({ type: "Warning", reason: "ImageUnreported" })
    expect(verdict.event?.message).toContain("is on 5 nodes (n1, n2, n3, and 2 more) but their Node status.images leaves it out")
  })

  it("one Warning per change of the nodes named, none while they stay (more nodes behind them included)", () => {
    const first = condition(unreportedVerdict(image, undefined, ["n1", "n2", "n3"], 50))!
    expect(unreportedVerdict(image, [first], ["n1", "n2", "n3"], 50).event).toBeUndefined()
    const withMore = condition(unreportedVerdict(image, [first], ["n1", "n2", "n3", "n4"], 50))!
    expect(unreportedVerdict(image, [first], ["n1", "n2", "n3", "n4"], 50).event).toBeDefined()
    expect(unreportedVerdict(image, [withMore], ["n1", "n2", "n3", "n4", "n5"], 50).event).toBeUndefined()
    expect(unreportedVerdict(image, [withMore], ["n0", "n1", "n2", "n3"], 50).event).toBeDefined()
    // Back to True after False: news again.
    expect(unreportedVerdict(image, [{ ...first, status: "False" }], ["n1", "n2", "n3"], 50).event).toBeDefined()
  })

  it("False, without a Warning, once no node leaves it out; nothing for a job that never had it", () => {
    const held = condition(unreportedVerdict(image, undefined, ["n1"], 50))!
    expect(unreportedVerdict(image, [held], [], 50)).toEqual({
      condition: {
        type: "ImageUnreported",
        status: "False",
        reason: "ListedByNodes",
        message: "every node that pulled the image lists it in status.images"
      },
      event: undefined
    })
    expect(unreportedVerdict(image, undefined, [], 50)).toEqual({ condition: undefined, event: undefined })
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
