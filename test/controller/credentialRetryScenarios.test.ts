// Nodes whose pull failed with credentials that were then rotated pull again once the new ones
// reach the daemons' copy, not at the tag's TTL (a day for a Never job): once per change, within
// the job's parallelism, for Never jobs and for Always jobs still running. The registry here
// checks the credentials the daemon reads from the copy when the pull ends.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultSettings } from "../../src/controller/settings.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")
const host = "registry.example.com"
const image = `${host}/app:1`

/** A pull secret's data logging in as `user`. */
const loginAs = (user: string) => ({
  ".dockerconfigjson": b64(JSON.stringify({ auths: { [host]: { auth: b64(`${user}:pw`) } } }))
})

const secret = (user: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "registry", namespace: "default" },
  type: "kubernetes.io/dockerconfigjson",
  data: loginAs(user)
})

const userOf = (copy: KubeObject): string | undefined => {
  const data = (copy["data"] as Record<string, string> | undefined)?.[".dockerconfigjson"]
  if (data === undefined) return undefined
  const config = JSON.parse(Buffer.from(data, "base64").toString("utf8")) as { auths: Record<string, { auth: string }> }
  const auth = config.auths[host]?.auth
  return auth === undefined ? undefined : Buffer.from(auth, "base64").toString("utf8").split(":")[0]
}

/** The registry: it lets only `accepted.user` pull, as read from the copies the daemon is pointed at. */
const registry = (accepted: { user: string }) => ({
  refusesCredentials: (_image: string, secrets: ReadonlyArray<KubeObject>) =>
    secrets.some((copy) => userOf(copy) === accepted.user) ? undefined : `failed to pull ${image}: 401 Unauthorized`
})

const job = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image, pullSecrets: ["registry"], ...spec }
})

type JobStatus = { succeeded?: number; failed?: number; active?: number; message?: string; failedNodes?: ReadonlyArray<string> }
const statusOf = (name: string) => Effect.map(get(resources.imagePullJob, name, "default"), (o) => (o["status"] ?? {}) as JobStatus)

/** Rotates the source Secret: the controller's poll carries it to the copy within secretResyncMs. */
const rotate = (user: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const current = yield* api.get(resources.secret, { name: "registry", namespace: "default" })
    yield* api.update(resources.secret, { ...current, data: loginAs(user) })
  })

const pullsOf = (pulls: Map<string, number>, nodes: ReadonlyArray<string>) => nodes.map((node) => pulls.get(`${node}/${host}/app:1`) ?? 0)

const events = (reason: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return (yield* api.list(resources.event, { namespace: "default" })).items.filter((e) => e["reason"] === reason)
  })

const nodes = ["n1", "n2", "n3"]

describe("a Never job whose pulls failed with credentials then rotated", () => {
  it.effect("pulls again on the failed nodes once the copy holds the new ones, within parallelism, once per change", () =>
    Effect.gen(function* () {
      const accepted = { user: "new" }
      const { pulls } = yield* startCluster(
        nodes.map((n) => readyNode(n)),
        { pullMs: 1000, ...registry(accepted) }
      )
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("old"))
      yield* api.create(resources.imagePullJob, job("warm", { parallelism: 2, completionPolicy: { type: "Never" } }))
      yield* advance(10_000)
      expect(yield* statusOf("warm")).toMatchObject({ succeeded: 0, failed: 3, failedNodes: nodes })
      expect(pullsOf(pulls, nodes)).toEqual([1, 1, 1])

      // Rotated to credentials the registry still refuses: each failed node tries them once.
      yield* rotate("wrong")
      yield* advance(defaultSettings.secretResyncMs + 5000)
      expect(pullsOf(pulls, nodes)).toEqual([2, 2, 2])
      expect(yield* statusOf("warm")).toMatchObject({ succeeded: 0, failed: 3 })
      yield* advance(120_000)
      expect(pullsOf(pulls, nodes)).toEqual([2, 2, 2])

      // The right ones: every node pulls again and succeeds; the job says why it pulls again.
      yield* rotate("new")
      yield* advance(defaultSettings.secretResyncMs + 5000)
      expect(yield* statusOf("warm")).toMatchObject({ succeeded: 3, failed: 0, message: "job is running, progress 100.0%" })
      expect(pullsOf(pulls, nodes)).toEqual([3, 3, 3])
      const retried = yield* events("CredentialsChanged")
      expect(retried.length).toBeGreaterThan(0)
      expect(String(retried[0]?.["message"])).toMatch(/^pull secrets changed: pulling "registry\.example\.com\/app:1" again on 2 nodes/)

      // Nodes that succeeded are not pulled again by the next rotation.
      yield* rotate("newer")
      accepted.user = "newer"
      yield* advance(60_000)
      expect(pullsOf(pulls, nodes)).toEqual([3, 3, 3])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("parallelism holds: with room for one node, the failed nodes pull again one after another", () =>
    Effect.gen(function* () {
      const accepted = { user: "new" }
      const { pulls } = yield* startCluster(
        nodes.map((n) => readyNode(n)),
        { pullMs: 4000, ...registry(accepted) }
      )
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("old"))
      yield* api.create(resources.imagePullJob, job("one", { parallelism: 1, completionPolicy: { type: "Never" } }))
      yield* advance(20_000)
      expect(yield* statusOf("one")).toMatchObject({ failed: 3 })
      yield* rotate("new")
      // Polled and copied within the resync, then one node at a time.
      for (let i = 0; i < 6; i++) {
        yield* advance(2000)
        expect((yield* statusOf("one")).active ?? 0).toBeLessThanOrEqual(1)
      }
      yield* advance(20_000)
      expect(yield* statusOf("one")).toMatchObject({ succeeded: 3, failed: 0 })
      expect(pullsOf(pulls, nodes)).toEqual([2, 2, 2])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})

describe("an Always job still running when its credentials are rotated", () => {
  it.effect("pulls again where it failed before completing, and completes with every node pulled", () =>
    Effect.gen(function* () {
      const accepted = { user: "new" }
      yield* startCluster(
        nodes.map((n) => readyNode(n)),
        { pullMs: 4000, ...registry(accepted) }
      )
      const api = yield* KubeApi
      yield* api.create(resources.secret, secret("old"))
      yield* api.create(resources.imagePullJob, job("once", { parallelism: 1 }))
      yield* advance(5000)
      expect(yield* statusOf("once")).toMatchObject({ failed: 1 })
      yield* rotate("new")
      yield* advance(60_000)
      expect(yield* statusOf("once")).toMatchObject({ message: "job has completed", succeeded: 3, failed: 0 })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
