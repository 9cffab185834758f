import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { copiesOfJob, copyName, holdingCopies, planCopies, secretProblem } from "../../src/controller/pullSecrets/copies.ts"
import { controllerStores } from "../../src/controller/stores.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"

const source = (data: Record<string, string>, type = "kubernetes.io/dockerconfigjson"): KubeObject => ({
  metadata: { name: "reg", namespace: "team", uid: "s-uid" },
  type,
  data
})

describe("pull secret copies", () => {
  it("copies a referenced secret into the daemon's namespace with its provenance", () => {
    const plan = planCopies(
      [{ namespace: "team", name: "reg", jobs: ["team/b", "team/a"] }],
      () => source({ ".dockerconfigjson": "e30=" }),
      [],
      "preheat-daemon-config"
    )
    expect(plan.create).toEqual([
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: "team.reg",
          namespace: "preheat-daemon-config",
          labels: { "preheat.kruise.io/secret-copy": "true", "app.kubernetes.io/managed-by": "preheat" },
          annotations: {
            "preheat.kruise.io/source-namespace": "team",
            "preheat.kruise.io/source-name": "reg",
            "preheat.kruise.io/source-uid": "s-uid",
            "preheat.kruise.io/referenced-by": "team/a,team/b"
          }
        },
        type: "kubernetes.io/dockerconfigjson",
        data: { ".dockerconfigjson": "e30=" }
      }
    ])
  })

  it("keeps a copy in sync with its source and leaves an equal one alone", () => {
    const refs = [{ namespace: "team", name: "reg", jobs: ["team/a"] }]
    const first = planCopies(refs, () => source({ ".dockerconfigjson": "e30=" }), [], "ns").create[0]!
    const stored = { ...first, metadata: { ...first.metadata, resourceVersion: "7" } }
    expect(planCopies(refs, () => source({ ".dockerconfigjson": "e30=" }), [stored], "ns")).toEqual({ create: [], update: [], delete: [] })
    const changed = planCopies(refs, () => source({ ".dockerconfigjson": "bmV3" }), [stored], "ns")
    expect(changed.update).toEqual([
      expect.objectContaining({ data: { ".dockerconfigjson": "bmV3" }, metadata: expect.objectContaining({ resourceVersion: "7" }) })
    ])
  })

  it("deletes copies nobody references, and does not copy secrets of other types", () => {
    const copy: KubeObject = { metadata: { name: "team.old", namespace: "ns" } }
    const plan = planCopies([{ namespace: "team", name: "reg", jobs: ["team/a"] }], () => source({}, "Opaque"), [copy], "ns")
    expect(plan).toEqual({ create: [], update: [], delete: ["team.old"] })
  })

  it("names copies within 253 characters", () => {
    expect(copyName("team", "reg")).toBe("team.reg")
    const long = copyName("n".repeat(63), "s".repeat(253))
    expect(long.length).toBeLessThanOrEqual(253)
    expect(long).not.toBe(copyName("n".repeat(63), `${"s".repeat(252)}t`))
  })

  it("explains a missing secret and one of the wrong type", () => {
    expect(secretProblem("team", "reg", undefined)).toEqual({ reason: "PullSecretNotFound", message: "pull secret team/reg not found" })
    expect(secretProblem("team", "reg", source({}, "Opaque"))?.message).toBe(
      "pull secret team/reg has type Opaque, want kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg"
    )
    expect(secretProblem("team", "reg", source({}))).toBeUndefined()
  })
})

describe("the copies a job holds", () => {
  const stored = (extra: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => {
    const jobs = controllerStores().jobs
    const object: KubeObject = {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImagePullJob",
      metadata: { name: "a", namespace: "team", uid: "uid-a", resourceVersion: "1", ...metadata },
      spec: { image: "nginx:1", pullSecrets: ["good", "bad"] },
      ...extra
    }
    Effect.runSync(jobs.written(object))
    return jobs.entry("team/a")
  }
  const secrets = (known: ReadonlyArray<string>, usable: ReadonlyArray<string>) => ({
    has: (_: string, name: string) => known.includes(name),
    usable: (_: string, name: string) => (usable.includes(name) ? {} : undefined)
  })

  it("are those of an unfinished, live, valid job", () => {
    expect(holdingCopies(stored())?.metadata.name).toBe("a")
    expect(holdingCopies(stored({ status: { completionTime: "2026-12-03T10:00:00Z" } }))).toBeUndefined()
    expect(holdingCopies(stored({}, { deletionTimestamp: "2026-12-03T10:00:00Z" }))).toBeUndefined()
    expect(holdingCopies(stored({ spec: { image: "Nginx:1" } }))).toBeUndefined()
  })

  it("point at the usable secrets only, none once the job finished, and are unknown until every secret was read", () => {
    expect(copiesOfJob(stored(), "ns", secrets(["good", "bad"], ["good"]))).toEqual([{ namespace: "ns", name: "team.good" }])
    expect(copiesOfJob(stored(), "ns", secrets(["good"], ["good"]))).toBeUndefined()
    expect(copiesOfJob(stored({ status: { completionTime: "2026-12-03T10:00:00Z" } }), "ns", secrets([], []))).toEqual([])
  })
})
