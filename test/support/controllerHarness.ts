import { Effect, Layer } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import { InMemoryKubeApi, InMemoryKubeStore } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import type { ControllerSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import type { Resource } from "../../src/kube/resources.ts"
import type { Scheduler } from "../../src/workqueue/Scheduler.ts"
import { simulateDaemons } from "./simulatedDaemons.ts"
import type { SimulatedDaemonOptions } from "./simulatedDaemons.ts"

export const harnessLayer = Layer.mergeAll(InMemoryKubeApi.layerWith(), SchedulerLive.layer())

/** The same on an API server without the custom kinds' schemas: every write is stored as sent. */
export const schemalessHarnessLayer = Layer.mergeAll(InMemoryKubeApi.layerWith({ admission: false }), SchedulerLive.layer())

/** The in-memory API server past its admission: for objects a real one refuses (InMemoryKubeStore.unadmitted). */
export const unadmitted = Effect.map(Effect.service(InMemoryKubeStore), (store) => store.unadmitted)

/**
 * A custom kind's resource in another of its versions: an object is written to the version it
 * names (the in-memory API server, as a real one, refuses an apiVersion other than the path's).
 */
export const inVersion = (resource: Resource, version: "v1alpha1" | "v1beta1"): Resource => ({
  ...resource,
  apiVersion: `apps.kruise.io/${version}`
})

/** Lets every fiber that can run do so, then moves simulated time on in steps. */
export const advance = (millis: number, step = 1000) =>
  Effect.gen(function* () {
    for (let elapsed = 0; elapsed < millis; elapsed += step) {
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow
      yield* TestClock.adjust(Math.min(step, millis - elapsed))
    }
    for (let i = 0; i < 20; i++) yield* Effect.yieldNow
  })

export const readyNode = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels } },
  status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "1970-01-01T00:00:00Z" }] }
})

/**
 * A cluster in memory: nodes with NodeImages, the controller reconciling, and simulated daemons
 * pulling, all on TestClock.
 */
export const startCluster = (
  nodes: ReadonlyArray<KubeObject>,
  daemons: SimulatedDaemonOptions,
  settings: Partial<ControllerSettings> = {}
): Effect.Effect<{ readonly pulls: Map<string, number> }, unknown, KubeApi | Scope.Scope | Scheduler> =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    for (const node of nodes) yield* api.create(resources.node, node)
    const controller = yield* makeController({ ...defaultSettings, ...settings })
    yield* Effect.forkScoped(controller.reconcile())
    const { pulls } = yield* simulateDaemons(daemons)
    yield* advance(31_000)
    return { pulls }
  })

export const get = (resource: Resource, name: string, namespace?: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return yield* api.get(resource, namespace === undefined ? { name } : { name, namespace })
  })
