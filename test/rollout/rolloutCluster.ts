// A cluster for `preheat rollout` tests: the embedded API server over HTTP, the controller and
// N node daemons in this process, each node on its own fake runtime that a test can script
// (fail or hang an image), and the workload's Pods placed as kube-controller-manager and the
// scheduler would (spec.nodeName, the selector's labels, Ready).
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Clock, Context, Effect, Exit, Layer, References, Scope } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { SimulatedRuntimeHandle } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { startEmbeddedApiServer } from "../../harness/apiserver/embeddedApiServer.ts"
import { kubeconfigFor } from "../../harness/apiserver/http/kubeconfig.ts"
import { rfc3339 } from "../../src/api/time.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { startDaemon } from "../../src/daemon/daemon.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { devNode, readyStatus } from "../../harness/cluster/devNodes.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"

export interface RolloutCluster {
  readonly url: string
  readonly kubeconfig: string
  readonly api: KubeApi["Service"]
  /** node-1..N's runtimes. */
  readonly runtimes: ReadonlyArray<SimulatedRuntimeHandle>
  readonly run: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>
  readonly close: () => Promise<void>
}

export const startRolloutCluster = async (options: { readonly nodes: number; readonly namespace: string }): Promise<RolloutCluster> => {
  const scope = Effect.runSync(Scope.make())
  const started = await Effect.runPromise(
    Effect.gen(function* () {
      const server = yield* startEmbeddedApiServer({})
      const inProcess = Layer.mergeAll(Layer.succeed(KubeApi, server.api), SchedulerLive.layer()).pipe(
        Layer.provideMerge(Metrics.layerTest)
      )
      const runtimes = yield* Effect.gen(function* () {
        const api = yield* KubeApi
        for (const name of ["preheat-daemon-config", options.namespace]) {
          yield* api.create(resources.namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
        }
        const since = rfc3339((yield* Clock.currentTimeMillis) - 3_600_000)
        for (let i = 0; i < options.nodes; i++) {
          const node = yield* api.create(resources.node, devNode(i))
          yield* api.patch(resources.node, { name: node.metadata.name ?? "" }, readyStatus(since), "status")
        }
        const controller = yield* makeController(defaultSettings)
        yield* Effect.forkScoped(controller.reconcile())
        const handles: Array<SimulatedRuntimeHandle> = []
        for (let i = 0; i < options.nodes; i++) {
          const services = yield* Layer.build(SimulatedRuntime.layer({ latency: "500 millis" }))
          handles.push(Context.get(services, SimulatedRuntime))
          yield* startDaemon(daemonOptions({ nodeName: `node-${i + 1}` })).pipe(Effect.provideContext(services))
        }
        yield* controller.synced
        return handles
      }).pipe(Effect.provide(inProcess))
      return { server, runtimes }
    }).pipe(
      // The roles' logs of scripted failures are expected here; the command's own output is what the tests read.
      Effect.provideService(References.MinimumLogLevel, "Error"),
      Scope.provide(scope)
    )
  )
  const directory = mkdtempSync(join(tmpdir(), "preheat-rollout-"))
  const kubeconfig = join(directory, "kubeconfig")
  // The context's namespace is the workload's: the command must find it without -n, as kubectl does.
  writeFileSync(kubeconfig, kubeconfigFor({ url: started.server.url, namespace: options.namespace }))
  return {
    url: started.server.url,
    kubeconfig,
    api: started.server.api,
    runtimes: started.runtimes,
    run: (effect) => Effect.runPromise(effect),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** A workload (a Deployment unless `kind` says otherwise) of `replicas` pods, placed on node-1..replicas and Ready. */
export const deployWithPods = async (
  cluster: RolloutCluster,
  namespace: string,
  name: string,
  containers: ReadonlyArray<{ readonly name: string; readonly image: string }>,
  replicas: number,
  kind: typeof resources.deployment | typeof resources.statefulSet | typeof resources.daemonSet = resources.deployment
): Promise<KubeObject> =>
  cluster.run(
    Effect.gen(function* () {
      const api = cluster.api
      const labels = { app: name }
      const deployment = yield* api.create(kind, {
        apiVersion: "apps/v1",
        kind: kind.kind,
        metadata: { name, namespace },
        spec: {
          ...(kind === resources.daemonSet ? {} : { replicas }),
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: containers.map((c) => ({ ...c })) } }
        }
      })
      for (let i = 0; i < replicas; i++) {
        const pod = yield* api.create(resources.pod, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: `${name}-${i}`, namespace, labels },
          spec: { nodeName: `node-${i + 1}`, containers: containers.map((c) => ({ ...c })) }
        })
        yield* api.patch(
          resources.pod,
          { namespace, name: pod.metadata.name ?? "" },
          {
            status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] }
          },
          "status"
        )
      }
      return deployment
    }).pipe(Effect.orDie)
  )
