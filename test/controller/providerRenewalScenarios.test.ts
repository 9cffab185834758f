// Nodes whose pull failed because the registry refused a credential provider's credentials pull
// again once the provider answers with others, not at the tag's TTL (a day for a Never job): the
// controller and the real daemons (each with its own providers over one fake plugin runner, on
// the simulated runtime) in one process on simulated time. The registry takes only the robot's
// credentials.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import type { CredentialProvider } from "../../src/cri/credentialProvider/config.ts"
import { CredentialProviders, makeCredentialProviders } from "../../src/cri/credentialProvider/CredentialProviders.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { startDaemon } from "../../src/daemon/daemon.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { answer, fakePluginRunner, responseJson } from "../support/fakePluginRunner.ts"
import { advance, get, harnessLayer, readyNode } from "../support/controllerHarness.ts"

const host = "registry.example.com"
const image = `${host}/app:1`
const nodes = ["n1", "n2", "n3"]
const minute = 60_000

const provider: CredentialProvider = {
  name: "robot",
  matchImages: [host],
  defaultCacheMillis: 0,
  apiVersion: "credentialprovider.kubelet.k8s.io/v1",
  args: [],
  env: [],
  tokenAttributes: undefined
}

/** The plugin's answer: `user`'s credentials, kept 30 minutes. */
const loginAs = (user: string) =>
  answer(responseJson({ cacheKeyType: "Registry", cacheDuration: "30m", auth: { [host]: { username: user, password: `pw-${user}` } } }))

/**
 * The controller and one daemon per node, each with its own runtime and providers (their caches
 * are the node's), all plugins run by `plugins`. Returns what each node's registry was offered.
 */
const startCluster = (plugins: ReturnType<typeof fakePluginRunner>) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    for (const node of nodes) yield* api.create(resources.node, readyNode(node))
    const controller = yield* makeController(defaultSettings)
    yield* Effect.forkScoped(controller.reconcile())
    const offered = new Map<string, Array<string>>()
    for (const node of nodes) {
      const services = yield* Layer.build(
        Layer.effect(CredentialProviders, makeCredentialProviders({ providers: [provider] }, { runTimeout: "1 minute" })).pipe(
          Layer.provide(plugins.layer),
          Layer.provideMerge(SimulatedRuntime.layer())
        )
      )
      const runtime = yield* SimulatedRuntime.pipe(Effect.provideContext(services))
      const seen: Array<string> = []
      offered.set(node, seen)
      yield* runtime.requireAuth(image, (auth) => {
        seen.push(auth?.username ?? "(anonymous)")
        return auth?.username === "robot"
      })
      yield* startDaemon(daemonOptions({ nodeName: node })).pipe(Effect.provideContext(services))
    }
    yield* advance(31_000)
    return offered
  })

const job: KubeObject = {
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name: "warm", namespace: "default" },
  spec: { image, parallelism: 3, completionPolicy: { type: "Never" }, pullPolicy: { backoffLimit: 0 } }
}

type JobStatus = { succeeded?: number; failed?: number; active?: number; failedNodes?: ReadonlyArray<string> }
const jobStatus = Effect.map(get(resources.imagePullJob, "warm", "default"), (o) => (o["status"] ?? {}) as JobStatus)

const tagOf = (node: string) =>
  Effect.map(
    get(resources.nodeImage, node),
    (o) =>
      (o["status"] as { imageStatuses?: Record<string, { tags: ReadonlyArray<ImageTagStatus> }> } | undefined)?.imageStatuses?.[
        `${host}/app`
      ]?.tags[0]
  )

const events = (reason: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return (yield* api.list(resources.event, { namespace: "default" })).items.filter((e) => e["reason"] === reason)
  })

describe("a Never job whose pulls a credential provider's credentials failed", () => {
  it.effect("pulls again on the failed nodes once the provider answers with credentials the registry takes, well before the TTL", () =>
    Effect.gen(function* () {
      const plugins = fakePluginRunner(new Map([["robot", loginAs("stale")]]))
      const offered = yield* startCluster(plugins)
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job)
      yield* advance(10_000)
      expect(yield* jobStatus).toMatchObject({ succeeded: 0, failed: 3, failedNodes: nodes })
      for (const node of nodes) {
        expect(offered.get(node)).toEqual(["stale"])
        expect(yield* tagOf(node)).toMatchObject({ phase: "Failed", version: 0, credentialProviders: [{ name: "robot" }] })
      }

      // The same refused credentials when the answers expire: nothing is pulled again.
      yield* advance(35 * minute, 10_000)
      expect(nodes.map((n) => offered.get(n)?.length)).toEqual([1, 1, 1])
      expect(yield* events("CredentialsChanged")).toEqual([])

      // The robot's: each daemon sees it once its kept answer expires, and its node pulls again.
      plugins.set("robot", loginAs("robot"))
      yield* advance(31 * minute, 10_000)
      expect(yield* jobStatus).toMatchObject({ succeeded: 3, failed: 0, active: 0 })
      for (const node of nodes) {
        expect(offered.get(node)).toEqual(["stale", "robot"])
        const tag = yield* tagOf(node)
        expect(tag).toMatchObject({ phase: "Succeeded", version: 1, authenticated: true })
        expect(tag?.credentialProviders).toBeUndefined()
      }
      const retried = yield* events("CredentialsChanged")
      expect(retried.length).toBeGreaterThan(0)
      expect(retried.map((e) => String(e["message"]))).toEqual(
        retried.map(() =>
          expect.stringMatching(
            /^the answer of credential provider "robot" changed: pulling "registry\.example\.com\/app:1" again on [123] nodes? where it failed$/
          )
        )
      )
      expect(retried.reduce((n, e) => n + Number(/on (\d) node/.exec(String(e["message"]))?.[1]), 0)).toBe(3)
      // Nothing leaks: no event, status or log line of the cluster holds a password.
      expect(JSON.stringify(yield* api.list(resources.event, {}))).not.toContain("pw-")
      expect(JSON.stringify(yield* api.list(resources.nodeImage, {}))).not.toContain("pw-")

      // Pulled: later answers change nothing.
      plugins.set("robot", loginAs("newer"))
      yield* advance(40 * minute, 10_000)
      expect(nodes.map((n) => offered.get(n)?.length)).toEqual([2, 2, 2])
    }).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(harnessLayer, Metrics.layerTest)))
  )
})
