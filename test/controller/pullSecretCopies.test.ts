import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { copiesOfJob, copyName, holdingCopies, isCopy, planCopies, secretProblem } from "../../src/controller/pullSecrets/copies.ts"
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
            "preheat.kruise.io/referenced-by": "team/a,team/b",
            // Upstream's bookkeeping, with the values its controller writes (issue 26 item 4).
            "imagepulljobs.kruise.io/source-key": "team/reg",
            "imagepulljobs.kruise.io/references": "team/a,team/b",
            "imagepulljobs.kruise.io/mode": "batch"
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

  it("keeps upstream's references annotation equal to preheat's when a job stops referencing the copy", () => {
    const both = planCopies([{ namespace: "team", name: "reg", jobs: ["team/b", "team/a"] }], () => source({}), [], "ns").create[0]!
    const stored = { ...both, metadata: { ...both.metadata, resourceVersion: "3" } }
    const narrowed = planCopies([{ namespace: "team", name: "reg", jobs: ["team/b"] }], () => source({}), [stored], "ns")
    expect(narrowed.update.map((c) => c.metadata.annotations)).toEqual([
      expect.objectContaining({
        "preheat.kruise.io/referenced-by": "team/b",
        "imagepulljobs.kruise.io/references": "team/b",
        "imagepulljobs.kruise.io/source-key": "team/reg"
      })
    ])
    expect(planCopies([], () => source({}), [stored], "ns").delete).toEqual(["team.reg"])
  })

  it("does not rewrite a copy whose annotations come back in another order", () => {
    const refs = [{ namespace: "team", name: "reg", jobs: ["team/a"] }]
    const first = planCopies(refs, () => source({}), [], "ns").create[0]!
    const sorted = Object.fromEntries(Object.entries(first.metadata.annotations ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)))
    const stored = { ...first, metadata: { ...first.metadata, annotations: sorted } }
    expect(planCopies(refs, () => source({}), [stored], "ns").update).toEqual([])
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

// A copy as OpenKruise's controller leaves it in kruise-daemon-config (upstream
// pkg/controller/imagepulljob/imagepulljob_controller.go generateSyncedSecret: the source's labels and
// annotations, a `NAME-xxxxxx` name, source-key, references and mode).
const upstreamCopy = (name: string, references: string, sourceKey = "team/reg"): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name,
    namespace: "kruise-daemon-config",
    uid: `${name}-uid`,
    resourceVersion: "5",
    labels: { team: "infra" },
    annotations: {
      "imagepulljobs.kruise.io/source-key": sourceKey,
      "imagepulljobs.kruise.io/references": references,
      "imagepulljobs.kruise.io/mode": "batch"
    }
  },
  type: "kubernetes.io/dockerconfigjson",
  data: { ".dockerconfigjson": "b2xk" }
})

describe("copies OpenKruise left (a migrated cluster)", () => {
  const refs = [{ namespace: "team", name: "reg", jobs: ["team/a"] }]
  const reg = () => source({ ".dockerconfigjson": "e30=" })

  it("are copies to look after; the namespace's other Secrets are not", () => {
    expect(isCopy(upstreamCopy("reg-a1b2c3", "team/a"))).toBe(true)
    expect(isCopy({ metadata: { name: "sa-token", namespace: "kruise-daemon-config", labels: { team: "infra" } } })).toBe(false)
  })

  it("is kept in sync while a job it names still uses its source, its references narrowed to the jobs still using it", () => {
    const plan = planCopies(refs, reg, [upstreamCopy("reg-a1b2c3", "team/a,team/done")], "kruise-daemon-config")
    expect(plan.delete).toEqual([])
    expect(plan.update).toEqual([
      expect.objectContaining({
        data: { ".dockerconfigjson": "e30=" },
        metadata: expect.objectContaining({
          name: "reg-a1b2c3",
          resourceVersion: "5",
          labels: { team: "infra" },
          annotations: {
            "imagepulljobs.kruise.io/source-key": "team/reg",
            "imagepulljobs.kruise.io/references": "team/a",
            "imagepulljobs.kruise.io/mode": "batch"
          }
        })
      })
    ])
    // preheat's own copy is made beside it: new writes point there.
    expect(plan.create.map((c) => c.metadata.name)).toEqual(["team.reg"])
  })

  it("is deleted once no unfinished job it names uses its source, as preheat's own copies are", () => {
    const copies = [
      upstreamCopy("reg-a1b2c3", "team/gone"),
      upstreamCopy("reg-d4e5f6", ""),
      upstreamCopy("other-778899", "team/a", "team/other"),
      // Before OpenKruise 1.9: generateName, and the source uid as a label.
      {
        ...upstreamCopy("reg-x7k2p", "team/a"),
        metadata: { ...upstreamCopy("reg-x7k2p", "team/a").metadata, labels: { "imagepulljobs.kruise.io/source-uid": "s-uid" } }
      }
    ]
    const plan = planCopies(refs, reg, copies, "kruise-daemon-config")
    expect([...plan.delete].sort()).toEqual(["other-778899", "reg-a1b2c3", "reg-d4e5f6"])
    expect(plan.update.map((c) => c.metadata.name)).toEqual(["reg-x7k2p"])
    expect(planCopies([], reg, copies, "kruise-daemon-config").delete).toHaveLength(4)
    // Its source gone or of another type: deleted as well.
    expect(planCopies(refs, () => source({}, "Opaque"), [upstreamCopy("reg-a1b2c3", "team/a")], "ns").delete).toEqual(["reg-a1b2c3"])
  })

  it("is left alone when it already matches", () => {
    const copy = { ...upstreamCopy("reg-a1b2c3", "team/a"), data: { ".dockerconfigjson": "e30=" } }
    expect(planCopies(refs, reg, [copy], "kruise-daemon-config").update).toEqual([])
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
