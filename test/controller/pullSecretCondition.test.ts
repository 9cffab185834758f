import { describe, expect, it } from "vitest"
import type { Condition } from "../../src/api/meta.ts"
import { decideImagePullJob } from "../../src/controller/imagePullJob/decide.ts"
import type { JobTask } from "../../src/controller/imagePullJob/nodeTask.ts"
import { pullSecretVerdict } from "../../src/controller/imagePullJob/pullSecretCondition.ts"
import { jobUid, makeJob, makeNodeImage } from "../support/fixtures.ts"

const problem = (name: string) => ({ message: `pull secret default/${name} is unusable: .dockerconfigjson has no "auths"` })
const condition = (status: "True" | "False", message: string): Condition => ({
  type: "PullSecretInvalid",
  status,
  reason: "InvalidDockerConfig",
  message,
  lastTransitionTime: "2026-12-02T10:00:00Z"
})

describe("the PullSecretInvalid condition", () => {
  it("is absent from a job that never had an unusable pull secret", () => {
    expect(pullSecretVerdict(undefined, [])).toEqual({ condition: undefined, event: undefined })
  })

  it("is True, with a Warning, when a problem first shows or changes, and only then", () => {
    const first = pullSecretVerdict(undefined, [problem("a")])
    expect(first.condition).toEqual({
      type: "PullSecretInvalid",
      status: "True",
      reason: "InvalidDockerConfig",
      message: problem("a").message
    })
    expect(first.event).toEqual({ type: "Warning", reason: "PullSecretInvalid", message: problem("a").message })
    expect(pullSecretVerdict([condition("True", problem("a").message)], [problem("a")]).event).toBeUndefined()
    const other = pullSecretVerdict([condition("True", problem("a").message)], [problem("b")])
    expect(other.event?.message).toBe(problem("b").message)
    expect(pullSecretVerdict([condition("False", "fine")], [problem("a")]).event).toBeDefined()
  })

  it("turns False once fixed, without a Warning", () => {
    expect(pullSecretVerdict([condition("True", problem("a").message)], [])).toEqual({
      condition: {
        type: "PullSecretInvalid",
        status: "False",
        reason: "PullSecretsValid",
        message: "every pull secret is a usable docker config"
      },
      event: undefined
    })
  })

  it("names three problems and counts the rest", () => {
    const message = pullSecretVerdict(undefined, ["a", "b", "c", "d", "e"].map(problem)).condition?.message
    expect(message).toBe(`${["a", "b", "c"].map((n) => problem(n).message).join("; ")}; and 2 more unusable pull secrets`)
  })
})

describe("decideImagePullJob with an unusable pull secret", () => {
  const owner = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: "job-1", namespace: "default", uid: jobUid }
  const task: JobTask = { image: "nginx", tag: "1.9.1", owner, imagePullPolicy: "IfNotPresent", pullSecrets: [] }
  const now = Date.parse("2026-12-02T10:00:00Z")
  const input = (job = makeJob({ image: "nginx:1.9.1" })) => ({
    job,
    task,
    targets: [makeNodeImage("node-0")],
    stale: [],
    now,
    propagateEdits: false,
    unusablePullSecrets: [problem("a")]
  })

  it("announces the condition and the Warning before its node writes, and still writes them", () => {
    const decision = decideImagePullJob(input())
    expect(decision.announceFirst).toBe(true)
    expect(decision.writes.map((w) => w.node)).toEqual(["node-0"])
    expect(decision.status.conditions?.find((c) => c.type === "PullSecretInvalid")?.status).toBe("True")
    expect(decision.events[0]).toEqual({ type: "Warning", reason: "PullSecretInvalid", message: problem("a").message })
  })

  it("does not announce again what the status already says", () => {
    const job = makeJob({ image: "nginx:1.9.1" }, { status: { conditions: [condition("True", problem("a").message)] } })
    const decision = decideImagePullJob(input(job))
    expect(decision.announceFirst).toBe(false)
    expect(decision.events.filter((e) => e.reason === "PullSecretInvalid")).toEqual([])
  })
})
