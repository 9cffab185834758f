import { describe, expect, it } from "vitest"
import { failureLines, judge, unfinished } from "../../src/rollout/outcome.ts"
import type { JobView, StatusModel } from "../../src/statusView/model.ts"

const view = (name: string, fields: Partial<JobView> = {}): JobView => ({
  kind: "ImagePullJob",
  namespace: "shop",
  name,
  target: "nginx:1.26",
  phase: "running",
  message: "",
  desired: 3,
  active: 0,
  succeeded: 0,
  failed: 0,
  nodes: [],
  ...fields
})

const model = (...jobs: Array<JobView>): StatusModel => ({ namespace: "shop", jobs })
const jobs = [
  { name: "web-web-x", image: "nginx:1.26" },
  { name: "web-sidecar-y", image: "envoy:1.30" }
]

describe("judging the rollout's jobs", () => {
  it("pulls while any job runs", () => {
    expect(judge(model(view("web-web-x", { phase: "completed", succeeded: 3 }), view("web-sidecar-y", { active: 2 })), jobs)).toEqual({
      _tag: "Pulling"
    })
  })

  it("succeeds once every job completed without a failed node", () => {
    const done = { phase: "completed" as const, succeeded: 3 }
    expect(judge(model(view("web-web-x", done), view("web-sidecar-y", done)), jobs)).toEqual({ _tag: "Succeeded" })
  })

  it("fails with the failed nodes and their messages, and a job deleted or invalid meanwhile", () => {
    const outcome = judge(
      model(
        view("web-web-x", {
          phase: "completed",
          succeeded: 2,
          failed: 1,
          nodes: [{ node: "node-2", phase: "Failed", message: "ImageNotFound: manifest unknown" }]
        })
      ),
      [...jobs, { name: "bad", image: "x:1" }]
    )
    expect(outcome._tag).toBe("Failed")
    expect(outcome._tag === "Failed" && failureLines(outcome.failures)).toEqual([
      "  ImagePullJob web-web-x (nginx:1.26) failed on 1 of 3 nodes",
      "    node-2: ImageNotFound: manifest unknown",
      "  ImagePullJob web-sidecar-y (envoy:1.30) was deleted before it completed",
      "  ImagePullJob bad (x:1) was deleted before it completed"
    ])
    const deadline = judge(
      model(
        view("web-web-x", {
          phase: "completed",
          succeeded: 2,
          failed: 1,
          message: "job exceeds activeDeadlineSeconds",
          nodes: [{ node: "node-3", phase: "Pulling", progress: 40 }]
        })
      ),
      jobs.slice(0, 1)
    )
    expect(deadline._tag === "Failed" && failureLines(deadline.failures)).toEqual([
      "  ImagePullJob web-web-x (nginx:1.26) failed on 1 of 3 nodes",
      "    node-3: still pulling when the job ended (job exceeds activeDeadlineSeconds)"
    ])
    const invalid = judge(model(view("web-web-x", { phase: "invalid", message: "bad spec" })), jobs.slice(0, 1))
    expect(invalid._tag === "Failed" && invalid.failures[0]?.reason).toBe("is invalid: bad spec")
  })

  it("at the timeout, lists the jobs not done with their nodes pulling and failed", () => {
    const pulling = view("web-web-x", {
      succeeded: 1,
      failed: 1,
      active: 1,
      nodes: [
        { node: "node-2", phase: "Pulling", progress: 40 },
        { node: "node-3", phase: "Failed" }
      ]
    })
    expect(failureLines(unfinished(model(pulling, view("web-sidecar-y", { phase: "completed", succeeded: 3 })), jobs))).toEqual([
      "  ImagePullJob web-web-x (nginx:1.26) 2 of 3 nodes done",
      "    node-2: still pulling",
      "    node-3: failed"
    ])
  })
})
