// The life of a pull secret's copy (issue 23 §4): it follows its source within seconds, goes when
// no unfinished job references it, is never made of an unusable docker config (the job says so
// before any pull and goes on with its other secrets), and the controller reads no Secret it was
// not pointed at.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Condition } from "../../src/api/meta.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, readyNode, startCluster } from "../support/controllerHarness.ts"
import { ApiRequests, recordingHarnessLayer } from "../support/recordingKubeApi.ts"

const copyNamespace = defaultSettings.secretNamespace
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")

/** A Secret's data holding a docker config. */
const dockerConfig = (config: unknown) => ({ ".dockerconfigjson": b64(JSON.stringify(config)) })
const usable = (user: string) => dockerConfig({ auths: { "registry.example.com": { auth: b64(`${user}:pw`) } } })

const secret = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "default" },
  type: "kubernetes.io/dockerconfigjson",
  data
})

const job = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec
})

const status = (o: KubeObject) =>
  (o["status"] ?? {}) as { completionTime?: string; message?: string; conditions?: ReadonlyArray<Condition> }

/** The copy of default/NAME, or its absence. */
const copyOf = (name: string) =>
  get(resources.secret, `default.${name}`, copyNamespace).pipe(
    Effect.map((copy): KubeObject | undefined => copy),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

const imageSecrets = (nodeImage: KubeObject, image: string) =>
  (nodeImage["spec"] as { images?: Record<string, { pullSecrets?: ReadonlyArray<unknown> }> }).images?.[image]?.pullSecrets

const hasImage = (nodeImage: KubeObject, image: string) =>
  (nodeImage["spec"] as { images?: Record<string, unknown> }).images?.[image] !== undefined

const events = Effect.gen(function* () {
  const api = yield* KubeApi
  return (yield* api.list(resources.event, { namespace: "default" })).items
})

describe("pull-secret copies: released when no unfinished job references them", () => {
  it.effect("an Always job that completed releases its copy, and its NodeImages stop pointing at it", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 2000 })
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("registry", usable("u")))
      yield* api.create(
        resources.imagePullJob,
        job("once", { image: "registry.example.com/app:1", parallelism: 2, pullSecrets: ["registry"] })
      )
      yield* advance(1000)
      expect(yield* copyOf("registry")).toBeDefined()
      expect(imageSecrets(yield* get(resources.nodeImage, "n1"), "registry.example.com/app")).toEqual([
        { namespace: copyNamespace, name: "default.registry" }
      ])
      yield* advance(4000)
      const done = yield* get(resources.imagePullJob, "once", "default")
      expect(status(done)).toMatchObject({ message: "job has completed" })
      // The job stays (no TTL), its copy does not.
      expect(yield* copyOf("registry")).toBeUndefined()
      for (const node of ["n1", "n2"]) {
        const nodeImage = yield* get(resources.nodeImage, node)
        expect(imageSecrets(nodeImage, "registry.example.com/app")).toBeUndefined()
      }
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )

  it.effect("an Always job past its deadline releases its copy", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000, silent: () => true })
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("registry", usable("u")))
      yield* api.create(
        resources.imagePullJob,
        job("late", {
          image: "nginx:1",
          pullSecrets: ["registry"],
          pullPolicy: { timeoutSeconds: 10 },
          completionPolicy: { type: "Always", activeDeadlineSeconds: 20 }
        })
      )
      yield* advance(5000)
      expect(yield* copyOf("registry")).toBeDefined()
      yield* advance(20_000)
      expect(status(yield* get(resources.imagePullJob, "late", "default"))).toMatchObject({ message: "job exceeds activeDeadlineSeconds" })
      expect(yield* copyOf("registry")).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )

  it.effect("two jobs share a copy: the one that completes first leaves it to the other, and both complete", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2"), readyNode("n3")], { pullMs: 2000 })
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("registry", usable("u")))
      yield* api.create(resources.imagePullJob, job("short", { image: "nginx:1", pullSecrets: ["registry"], selector: { names: ["n1"] } }))
      yield* api.create(resources.imagePullJob, job("long", { image: "redis:7", pullSecrets: ["registry"], parallelism: 1 }))
      yield* advance(3500)
      expect(status(yield* get(resources.imagePullJob, "short", "default"))).toMatchObject({ message: "job has completed" })
      expect(status(yield* get(resources.imagePullJob, "long", "default")).completionTime).toBeUndefined()
      const kept = yield* copyOf("registry")
      expect(kept?.metadata.annotations?.["preheat.kruise.io/referenced-by"]).toBe("default/long")
      // The long job's tasks (on whichever nodes it started: target order is rotated per job) still point at the copy.
      const tasks = (yield* api.list(resources.nodeImage)).items.filter((n) => hasImage(n, "redis"))
      expect(tasks).not.toEqual([])
      for (const nodeImage of tasks)
        expect(imageSecrets(nodeImage, "redis")).toEqual([{ namespace: copyNamespace, name: "default.registry" }])
      yield* advance(5000)
      expect(status(yield* get(resources.imagePullJob, "long", "default"))).toMatchObject({ message: "job has completed", succeeded: 3 })
      expect(yield* copyOf("registry")).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )

  it.effect("two jobs share a copy: deleting one keeps it for the other, which completes", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 2000 })
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("registry", usable("u")))
      yield* api.create(
        resources.imagePullJob,
        job("doomed", { image: "nginx:1", pullSecrets: ["registry"], completionPolicy: { type: "Never" } })
      )
      yield* api.create(resources.imagePullJob, job("kept", { image: "redis:7", pullSecrets: ["registry"], parallelism: 1 }))
      yield* advance(1000)
      yield* api.delete(resources.imagePullJob, { name: "doomed", namespace: "default" })
      yield* advance(1000)
      const kept = yield* copyOf("registry")
      expect(kept?.metadata.annotations?.["preheat.kruise.io/referenced-by"]).toBe("default/kept")
      yield* advance(4000)
      expect(status(yield* get(resources.imagePullJob, "kept", "default"))).toMatchObject({ message: "job has completed", succeeded: 2 })
      expect(yield* copyOf("registry")).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )
})

describe("pull secrets that are no usable docker config", () => {
  const password = "hunter2-NEVER-SHOWN"

  it.effect(
    "get PullSecretInvalid and a Warning before any pull; the job goes on with its other secrets; fixed, the condition turns False",
    () =>
      Effect.gen(function* () {
        yield* startCluster([readyNode("n1")], { pullMs: 1000 })
        const api = yield* KubeApi
        const { seen } = yield* ApiRequests
        yield* api.create(resources.secret, secret("good", usable("u")))
        const bad = yield* api.create(
          resources.secret,
          secret("bad", dockerConfig({ auths: { "https://robot@registry.example.com/v2/": { auth: `${password}!` } } }))
        )
        const from = seen.length
        yield* api.create(
          resources.imagePullJob,
          job("mixed", { image: "registry.example.com/app:1", pullSecrets: ["bad", "good"], completionPolicy: { type: "Never" } })
        )
        yield* advance(2000)

        const mixed = yield* get(resources.imagePullJob, "mixed", "default")
        const condition = status(mixed).conditions?.find((c) => c.type === "PullSecretInvalid")
        const message =
          'pull secret default/bad is unusable: entry "registry.example.com" of .dockerconfigjson: "auth" is not base64 of username:password'
        expect(condition).toMatchObject({ status: "True", reason: "InvalidDockerConfig", message })
        const warnings = (yield* events).filter((e) => e["reason"] === "PullSecretInvalid")
        expect(warnings.map((e) => [e["type"], e["message"]])).toEqual([["Warning", message]])
        // Before any pull: the condition is written before the job's first NodeImage write.
        const requests = seen.slice(from)
        const announced = requests.findIndex(
          (r) => r.resource === "imagepulljobs/status" && r.verb === "patch" && JSON.stringify(r.body).includes("PullSecretInvalid")
        )
        const firstTask = requests.findIndex((r) => r.resource === "nodeimages" && r.verb === "patch")
        expect(announced).toBeGreaterThanOrEqual(0)
        expect(firstTask).toBeGreaterThan(announced)
        // The other secret is used; the unusable one is neither copied nor pointed at.
        expect(imageSecrets(yield* get(resources.nodeImage, "n1"), "registry.example.com/app")).toEqual([
          { namespace: copyNamespace, name: "default.good" }
        ])
        expect(yield* copyOf("good")).toBeDefined()
        expect(yield* copyOf("bad")).toBeUndefined()
        // The content shows nowhere: status, events, nor any write the controller sent.
        const written = JSON.stringify([mixed["status"], yield* events, requests.filter((r) => r.verb !== "get").map((r) => r.body)])
        expect(written).not.toContain(password)
        expect(written).not.toContain(b64(password))

        // Fixed: within the poll, the copy appears, the tasks point at it, and the condition turns False.
        yield* api.update(resources.secret, { ...bad, data: usable("fixed") })
        yield* advance(defaultSettings.secretResyncMs + 2000)
        expect(yield* copyOf("bad")).toBeDefined()
        expect(imageSecrets(yield* get(resources.nodeImage, "n1"), "registry.example.com/app")).toEqual([
          { namespace: copyNamespace, name: "default.good" },
          { namespace: copyNamespace, name: "default.bad" }
        ])
        const fixed = status(yield* get(resources.imagePullJob, "mixed", "default")).conditions?.find((c) => c.type === "PullSecretInvalid")
        expect(fixed).toMatchObject({ status: "False", reason: "PullSecretsValid" })
        expect((yield* events).filter((e) => e["reason"] === "PullSecretInvalid")).toHaveLength(1)

        // Broken again: its copy goes, the tasks stop pointing at it, and the job says so once more.
        const current = yield* api.get(resources.secret, { name: "bad", namespace: "default" })
        yield* api.update(resources.secret, { ...current, data: dockerConfig({ auths: { "": { auth: b64("u:pw") } } }) })
        yield* advance(defaultSettings.secretResyncMs + 2000)
        expect(yield* copyOf("bad")).toBeUndefined()
        expect(imageSecrets(yield* get(resources.nodeImage, "n1"), "registry.example.com/app")).toEqual([
          { namespace: copyNamespace, name: "default.good" }
        ])
        const again = status(yield* get(resources.imagePullJob, "mixed", "default")).conditions?.find((c) => c.type === "PullSecretInvalid")
        expect(again).toMatchObject({
          status: "True",
          message: "pull secret default/bad is unusable: .dockerconfigjson has an entry with an empty registry key"
        })
        expect((yield* events).filter((e) => e["reason"] === "PullSecretInvalid")).toHaveLength(2)
      }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )

  it.effect("an Always job whose only secret is unusable pulls without it and completes", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("helpers", dockerConfig({ credsStore: "desktop" })))
      yield* api.create(resources.imagePullJob, job("anonymous", { image: "nginx:1", pullSecrets: ["helpers"] }))
      yield* advance(3000)
      const done = status(yield* get(resources.imagePullJob, "anonymous", "default"))
      expect(done).toMatchObject({ message: "job has completed" })
      expect(done.conditions?.find((c) => c.type === "PullSecretInvalid")).toMatchObject({
        status: "True",
        message: 'pull secret default/helpers is unusable: .dockerconfigjson has no "auths"'
      })
      expect(yield* copyOf("helpers")).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )
})

describe("the Secrets the controller reads", () => {
  it.effect(
    "only the referenced ones, by GET: no Secret list or watch outside the copies' namespace; a poll costs 60/interval GETs a minute",
    () =>
      Effect.gen(function* () {
        yield* startCluster([readyNode("n1")], { pullMs: 1000 })
        const api = yield* KubeApi
        const { seen } = yield* ApiRequests
        yield* api.create(resources.secret, secret("registry", usable("u")))
        yield* api.create(resources.secret, secret("unrelated", usable("other")))
        const from = seen.length
        yield* api.create(
          resources.imagePullJob,
          job("warm", { image: "nginx:1", pullSecrets: ["registry"], completionPolicy: { type: "Never" } })
        )
        yield* advance(10_000)
        const idleFrom = seen.length
        yield* advance(60_000)
        const idle = seen.slice(idleFrom)

        // Every request since the controller started (the test's own creates aside).
        const secretRequests = [...seen.slice(0, from).filter((r) => r.verb !== "create"), ...seen.slice(from)].filter(
          (r) => r.resource === "secrets"
        )
        expect(secretRequests.filter((r) => r.verb === "watch")).not.toEqual([])
        for (const r of secretRequests.filter((r) => r.verb === "list" || r.verb === "watch")) {
          // The whole copies' namespace: OpenKruise's copies there carry no label of preheat's (issue 26).
          expect(r).toMatchObject({ namespace: copyNamespace })
        }
        const sourceReads = secretRequests.filter((r) => r.namespace === "default")
        expect(new Set(sourceReads.map((r) => `${r.verb} ${r.name}`))).toEqual(new Set(["get registry"]))
        const perMinute = idle.filter((r) => r.resource === "secrets" && r.verb === "get" && r.name === "registry").length
        expect(perMinute).toBeGreaterThanOrEqual(60_000 / defaultSettings.secretResyncMs - 1)
        expect(perMinute).toBeLessThanOrEqual(60_000 / defaultSettings.secretResyncMs + 1)
        // Idle, the poll is the only Secret request: copies are not rewritten when nothing changed.
        expect(idle.filter((r) => r.resource === "secrets" && r.verb !== "get")).toEqual([])
      }).pipe(Effect.scoped, Effect.provide(recordingHarnessLayer()))
  )
})
