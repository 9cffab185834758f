import { stripVTControlCharacters } from "node:util"
import { describe, expect, it } from "vitest"
import { render } from "../../src/statusView/render.ts"
import { goldenModel, t0 } from "./fixtures.ts"
import { rawControls, titleEscapeReference } from "../support/hostileText.ts"

describe("render, plain mode", () => {
  it("draws the golden view for a fixed model and time", () => {
    expect(render(goldenModel, t0, Number.POSITIVE_INFINITY, "plain")).toEqual([
      "namespace default  3 jobs  2026-12-01T10:00:00Z",
      "",
      "ImagePullJob warm-nginx  nginx:1.9.1  running",
      "  [######!!------------]  40%  desired 10  active 3  succeeded 3  failed 1  elapsed 2m  eta 3m",
      "  job is running, progress 40.0%",
      "    node-5   Pulling   42%  15s",
      "    node-12  Pulling     -  3s",
      "    node-7   Failed   rpc error: not found",
      "",
      "ImageListPullJob base-images  2 images  completed",
      "  [####################] 100%  desired 2  active 0  succeeded 2  failed 0  elapsed 5m  eta done",
      "",
      "ImagePullJob later  busybox:1.36  paused  (of base-images)",
      "  [--------------------]   0%  desired 3  active 0  succeeded 0  failed 0  elapsed -  eta -",
      "  job is paused, progress 0.0%"
    ])
  })

  it("lists the nodes warming after the jobs, each with what it still pulls", () => {
    const warming = [
      {
        node: "node-4",
        since: t0 - 65_000,
        pulls: [
          { image: "nginx:1.25", phase: "Pulling", progress: 40 },
          { image: "redis:7", phase: "Waiting" }
        ]
      },
      { node: "node-5", pulls: [] }
    ]
    expect(render({ namespace: "default", jobs: [], warming }, t0, Number.POSITIVE_INFINITY, "plain")).toEqual([
      "namespace default  0 jobs  2026-12-01T10:00:00Z",
      "no ImagePullJobs or ImageListPullJobs",
      "",
      "nodes warming 2  held by the startup taint until warm",
      "  node-4  held 65s",
      "    nginx:1.25  Pulling  40%",
      "    redis:7  Waiting",
      "  node-5  nothing to pull yet"
    ])
  })

  it("says which phase of seeding a job is in, and a bad seed-nodes value", () => {
    const [job] = goldenModel.jobs
    const seeding = { ...job!, stage: "seeding" as const, message: "job is seeding, 0 of 2 seed nodes pulled, progress 0.0%", nodes: [] }
    const problem = { ...job!, seedingProblem: 'annotation preheat.kruise.io/seed-nodes: "x" is not a count', nodes: [] }
    const lines = render(
      { namespace: "default", jobs: [seeding, { ...job!, stage: "fanning out", nodes: [] }, problem] },
      t0,
      Number.POSITIVE_INFINITY,
      "plain"
    )
    expect(lines.filter((l) => l.startsWith("ImagePullJob") || l.startsWith("  job") || l.startsWith("  annotation"))).toEqual([
      "ImagePullJob warm-nginx  nginx:1.9.1  running  seeding",
      "  job is seeding, 0 of 2 seed nodes pulled, progress 0.0%",
      "ImagePullJob warm-nginx  nginx:1.9.1  running  fanning out",
      "  job is running, progress 40.0%",
      "ImagePullJob warm-nginx  nginx:1.9.1  running",
      "  job is running, progress 40.0%",
      '  annotation preheat.kruise.io/seed-nodes: "x" is not a count'
    ])
  })

  it("cuts every line to the width", () => {
    const lines = render(goldenModel, t0, 30, "plain")
    expect(Math.max(...lines.map((l) => l.length))).toBe(30)
    expect(lines[3]).toBe("  [######!!------------]  40% ")
  })

  it("escapes what users and the runtime wrote: a terminal title escape and a bidi override stay visible text", () => {
    const [job] = goldenModel.jobs
    const nodes = [{ node: "node-7", phase: "Failed" as const, message: `failed to pull image ${titleEscapeReference}` }]
    const lines = render({ namespace: "default", jobs: [{ ...job!, target: titleEscapeReference, nodes }] }, t0, 200, "terminal")
    expect(rawControls(stripVTControlCharacters(lines.join("\n")))).toEqual([])
    expect(stripVTControlCharacters(lines.at(-1)!)).toBe("    node-7  Failed   failed to pull image nginx\\x1b]0;pwned\\a\\u202e:latest")
  })

  it("caps the node rows per job and says how many more", () => {
    const nodes = Array.from({ length: 13 }, (_, i) => ({ node: `n${i}`, phase: "Failed" as const }))
    const [job] = goldenModel.jobs
    const lines = render({ namespace: "default", jobs: [{ ...job!, nodes }] }, t0, 200, "plain")
    expect(lines.filter((l) => l.includes("Failed"))).toHaveLength(10)
    expect(lines.at(-1)).toBe("    +3 more nodes")
  })

  it("says so when there is nothing to show", () => {
    expect(render({ namespace: "ns", jobs: [] }, t0, 80, "plain")).toEqual([
      "namespace ns  0 jobs  2026-12-01T10:00:00Z",
      "no ImagePullJobs or ImageListPullJobs"
    ])
    expect(render({ namespace: "ns", job: "x", jobs: [] }, t0, 80, "plain")[1]).toBe("no job named x")
  })

  it("never colours plain output", () => {
    for (const line of render(goldenModel, t0, 200, "plain")) expect(stripVTControlCharacters(line)).toBe(line)
  })
})

describe("render, terminal mode", () => {
  it("colours and draws a block bar, within the width once escapes are stripped", () => {
    const lines = render(goldenModel, t0, 100, "terminal")
    expect(lines.some((l) => l !== stripVTControlCharacters(l))).toBe(true)
    const visible = lines.map(stripVTControlCharacters)
    expect(visible[3]).toMatch(/^ {2}█{9}█{3}░{18} {2}40% /)
    for (const line of visible) expect([...line].length).toBeLessThanOrEqual(100)
  })
})

describe("render: digests", () => {
  const a = `sha256:${"a".repeat(64)}`
  const b = `sha256:${"b".repeat(64)}`
  const job = goldenModel.jobs[0]!

  it("shows the one digest the nodes resolved", () => {
    const lines = render({ ...goldenModel, jobs: [{ ...job, digests: [{ digest: a, nodes: 3 }] }] }, t0, Number.POSITIVE_INFINITY, "plain")
    expect(lines).toContain("  digest sha256:aaaaaaaaaaaa on 3 nodes")
  })

  it("shows DigestMismatch with the counts and the condition's message", () => {
    const digests = [
      { digest: a, nodes: 3 },
      { digest: b, nodes: 1 }
    ]
    const digestMismatch = `"nginx:1.9.1" resolved to 2 digests on the job's nodes (the tag moved during the job): ${a} on node-1; ${b} on node-2`
    const lines = render({ ...goldenModel, jobs: [{ ...job, digests, digestMismatch }] }, t0, Number.POSITIVE_INFINITY, "plain")
    expect(lines).toContain("  DigestMismatch  sha256:aaaaaaaaaaaa on 3 nodes, sha256:bbbbbbbbbbbb on 1 node")
    expect(lines).toContain(`  ${digestMismatch}`)
  })
})

describe("render: a list job's DigestMismatch", () => {
  it("shows the condition's message without digests (the children carry them)", () => {
    const job = goldenModel.jobs[1]!
    const digestMismatch = `1 of the images resolved to more than one digest on their nodes (the tag moved): "a:latest" (ImagePullJob list-x)`
    const lines = render({ ...goldenModel, jobs: [{ ...job, digestMismatch }] }, t0, Number.POSITIVE_INFINITY, "plain")
    expect(lines).toContain("  DigestMismatch")
    expect(lines).toContain(`  ${digestMismatch}`)
  })
})

describe("render: the nodes' kubelet image verification", () => {
  const job = goldenModel.jobs[0]!

  it("shows the nodes of each case with their policy, then the nodes by policy", () => {
    const model = {
      ...goldenModel,
      jobs: [
        {
          ...job,
          unverified: {
            nodes: 7,
            examples: [
              { node: "node-1", why: "NeverVerifyPreloadedImages" },
              { node: "node-3", why: "NeverVerifyAllowlistedImages (allowlisted)" }
            ]
          },
          reverified: { nodes: 1, examples: [{ node: "node-2", why: "AlwaysVerify" }] }
        }
      ],
      policies: [
        { policy: "NeverVerifyPreloadedImages", nodes: 6 },
        { policy: "AlwaysVerify", nodes: 1 }
      ]
    }
    const lines = render(model, t0, Number.POSITIVE_INFINITY, "plain")
    expect(lines).toContain(
      "  PreloadedImageUnverified  7 nodes let any pod start it without credentials: node-1 NeverVerifyPreloadedImages, " +
        "node-3 NeverVerifyAllowlistedImages (allowlisted), +5 more"
    )
    expect(lines).toContain(
      "  PreloadedImageReverified  1 node makes pods check their credentials with the registry at start: node-2 AlwaysVerify"
    )
    expect(lines.at(-1)).toBe("kubelet image verification  NeverVerifyPreloadedImages 6 nodes, AlwaysVerify 1 node")
  })

  it("says nothing of it when no daemon reported a policy", () => {
    const lines = render(goldenModel, t0, Number.POSITIVE_INFINITY, "plain")
    expect(lines.some((l) => l.includes("kubelet") || l.includes("Preloaded"))).toBe(false)
  })
})
