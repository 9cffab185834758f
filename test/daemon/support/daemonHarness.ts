import { Clock, Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import type { SimulatedRuntimeConfig } from "../../../harness/layers/simulatedRuntime/config.ts"
import { SimulatedRuntime } from "../../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { InMemoryKubeApi, InMemoryKubeStore } from "../../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../../layers/scheduler.ts"
import type { ImageTagStatus } from "../../../src/api/nodeImage.ts"
import type { CriRuntime } from "../../../src/cri/CriRuntime.ts"
import type { FilesystemStats } from "../../../src/cri/FilesystemStats.ts"
import { type Daemon, startDaemon } from "../../../src/daemon/daemon.ts"
import { daemonOptions, type DaemonOptions } from "../../../src/daemon/options.ts"
import { isJsonPatch, KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import { Metrics } from "../../../src/ops/metrics.ts"
import type { Scheduler } from "../../../src/workqueue/Scheduler.ts"

export const node = "node-1"
export const secretNamespace = "preheat-daemon-config"
export const epoch = "1970-01-01T00:00:00Z"

/** A status patch as the API server received it, with the Clock time it was sent. */
export interface StatusPatch {
  readonly at: number
  readonly body: Record<string, unknown>
}

/** Every status patch of the daemon, and a hook to stage a concurrent writer before the next one. */
export class PatchLog extends Context.Service<
  PatchLog,
  {
    readonly statusPatches: Array<StatusPatch>
    beforeNextStatusPatch: Effect.Effect<void, unknown, never> | undefined
  }
>()("test/daemon/PatchLog") {}

/**
 * The in-memory API server, seen through a KubeApi that records status patches; without admission,
 * a server that has no schema for the custom kinds (one whose CRD keeps unknown fields, say).
 */
const kubeLayer = (admission: boolean): Layer.Layer<KubeApi | InMemoryKubeStore | PatchLog> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const inner = yield* KubeApi
      const store = yield* InMemoryKubeStore
      const log = PatchLog.of({ statusPatches: [], beforeNextStatusPatch: undefined })
      const api = KubeApi.of({
        ...inner,
        patch: (resource, key, body, subresource) =>
          Effect.gen(function* () {
            // The daemon's status writes are merge patches; anything else is not what this log is for.
            if (subresource === "status" && !isJsonPatch(body)) {
              const hook = log.beforeNextStatusPatch
              log.beforeNextStatusPatch = undefined
              if (hook !== undefined) yield* Effect.orDie(hook)
              log.statusPatches.push({ at: yield* Clock.currentTimeMillis, body })
            }
            return yield* inner.patch(resource, key, body, subresource)
          })
      })
      return Context.make(KubeApi, api).pipe(Context.add(InMemoryKubeStore, store), Context.add(PatchLog, log))
    })
  ).pipe(Layer.provide(InMemoryKubeApi.layerWith({ admission })))

export type TestServices = KubeApi | InMemoryKubeStore | PatchLog | CriRuntime | FilesystemStats | SimulatedRuntime | Metrics | Scheduler

export const testLayer = (cri: SimulatedRuntimeConfig = {}, options: { readonly admission?: boolean } = {}): Layer.Layer<TestServices> =>
  Layer.mergeAll(kubeLayer(options.admission ?? true), SimulatedRuntime.layer(cri), Metrics.layerTest, SchedulerLive.layer())

/** Lets every fiber that can run do so. */
export const settle = Effect.gen(function* () {
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow
})

/** Moves simulated time on in steps, letting fibers run at each. */
export const advance = (millis: number, step = 100) =>
  Effect.gen(function* () {
    yield* settle
    for (let elapsed = 0; elapsed < millis; elapsed += step) {
      yield* TestClock.adjust(Math.min(step, millis - elapsed))
      yield* settle
    }
  })

/** One tag of a NodeImage spec, created at the epoch, version 0. */
export const tag = (name: string, extra: Record<string, unknown> = {}) => ({ tag: name, createdAt: epoch, version: 0, ...extra })

export const nodeImageObject = (images: Record<string, unknown>, name = node): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "NodeImage",
  metadata: { name },
  spec: { images }
})

export const createNodeImage = (images: Record<string, unknown>, name = node) =>
  Effect.flatMap(Effect.service(KubeApi), (api) => api.create(resources.nodeImage, nodeImageObject(images, name)))

/** The same, written past the API server's admission: a spec a real server refuses (an older CRD's, a hand edit past it). */
export const createUnadmittedNodeImage = (images: Record<string, unknown>, name = node) =>
  Effect.flatMap(Effect.service(InMemoryKubeStore), (store) => store.unadmitted.create(resources.nodeImage, nodeImageObject(images, name)))

/** Replaces spec.images as a controller's update would. */
export const setImages = (images: Record<string, unknown>) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const current = yield* api.get(resources.nodeImage, { name: node })
    return yield* api.update(resources.nodeImage, { ...current, spec: { images } })
  })

export const getNodeImage = Effect.flatMap(Effect.service(KubeApi), (api) => api.get(resources.nodeImage, { name: node }))

export const nodeStatus = Effect.map(
  getNodeImage,
  (o) =>
    (o["status"] ?? {}) as Record<string, unknown> & {
      readonly imageStatuses?: Record<string, { readonly tags: ReadonlyArray<ImageTagStatus> }>
    }
)

export const tagStatus = (image: string, tagName: string) =>
  Effect.map(nodeStatus, (status) => status.imageStatuses?.[image]?.tags.find((t) => t.tag === tagName))

export const events = Effect.map(
  Effect.flatMap(Effect.service(KubeApi), (api) => api.list(resources.event)),
  (list) =>
    list.items as ReadonlyArray<
      KubeObject & {
        readonly reason?: string
        readonly type?: string
        readonly message?: string
        readonly involvedObject?: Record<string, unknown>
      }
    >
)

export const secret = (name: string, auths: Record<string, { username: string; password: string }>): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: secretNamespace },
  type: "kubernetes.io/dockerconfigjson",
  data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths })).toString("base64") }
})

export const launch = (options: Partial<DaemonOptions> = {}): Effect.Effect<Daemon, never, TestServices | Scope.Scope> =>
  Effect.gen(function* () {
    const daemon = yield* startDaemon(daemonOptions({ nodeName: node, secretNamespace, ...options }))
    yield* settle
    return daemon
  })
