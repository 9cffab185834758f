import { Clock, Console, Effect, FileSystem, Layer } from "effect"
import type { Scope } from "effect"
import { startEmbeddedApiServer } from "../apiserver/embeddedApiServer.ts"
import { kubeconfigFor } from "../apiserver/http/kubeconfig.ts"
import { rfc3339 } from "../../src/api/time.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import type { CriRuntime } from "../../src/cri/CriRuntime.ts"
import type { RuntimeUnavailable } from "../../src/cri/errors.ts"
import type { FilesystemStats } from "../../src/cri/FilesystemStats.ts"
import type { ImageLabels } from "../../src/cri/ImageLabels.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import type { Metrics } from "../../src/ops/metrics.ts"
import type { Scheduler } from "../../src/workqueue/Scheduler.ts"
import { devNode, readyStatus } from "./devNodes.ts"
import { simulateNodes } from "./nodeSimulator.ts"
import type { NodeRuntime, SimulatedNodeOptions } from "./nodeSimulator.ts"
import { startWorkloads } from "./workloadStandIns/workloads.ts"
import { publishServed } from "./devMirror.ts"
import { makeSimulatedPeerMirror } from "../layers/simulatedRuntime/simulatedNode.ts"

export interface DevOptions {
  readonly nodes: number
  readonly host: string
  readonly port: number
  readonly kubeconfigOut: string
  /** The controller's --eraser-exclusion-namespace, created here as installing eraser would. */
  readonly eraserExclusionNamespace?: string | undefined
  /** A real runtime for node-1 (the command's live CRI layer); the other nodes stay simulated. */
  readonly node1Runtime: Layer.Layer<CriRuntime | ImageLabels | FilesystemStats, RuntimeUnavailable> | undefined
  /** Every node's daemon's --min-free-disk, and the simulated nodes' disk. */
  readonly node: SimulatedNodeOptions
  /** Peer-to-peer mode: the simulated nodes pull through one mirror (harness/layers/simulatedRuntime/peerMirror.ts). */
  readonly p2p?: boolean
}

export interface DevCluster {
  readonly url: string
  readonly kubeconfig: string
}

/**
 * `preheat dev`: the embedded API server, the controller and N node daemons in one process, on
 * the in-process store (no HTTP between them); kubectl reaches the same store over HTTP. Stand-ins
 * for the workload controllers, the scheduler and the kubelets (./workloadStandIns/) make Deployments,
 * StatefulSets and DaemonSets run pods on the simulated nodes. The controller, the daemons and the
 * simulated registry all count into the one Metrics given.
 */
export const startDevCluster = (
  options: DevOptions
): Effect.Effect<DevCluster, unknown, Scope.Scope | FileSystem.FileSystem | Scheduler | Metrics> =>
  Effect.gen(function* () {
    const server = yield* startEmbeddedApiServer({ host: options.host, port: options.port })
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFileString(options.kubeconfigOut, kubeconfigFor({ url: server.url }), { mode: 0o600 })
    const inProcess = Layer.succeed(KubeApi, server.api)
    yield* Effect.gen(function* () {
      const api = yield* KubeApi
      const eraserNamespace = options.eraserExclusionNamespace
      for (const name of new Set(["preheat-daemon-config", ...(eraserNamespace === undefined ? [] : [eraserNamespace])])) {
        yield* api.create(resources.namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
      }
      // Ready long enough ago that NodeImages appear at once.
      const since = rfc3339((yield* Clock.currentTimeMillis) - 3_600_000)
      for (let i = 0; i < options.nodes; i++) {
        const node = yield* api.create(resources.node, devNode(i))
        yield* api.patch(resources.node, { name: node.metadata.name ?? "" }, readyStatus(since), "status")
      }
      const controller = yield* makeController({
        ...defaultSettings,
        eraserExclusionNamespace: eraserNamespace
      })
      yield* Effect.forkScoped(controller.reconcile())
      // node-1's real runtime is built first, so a wrong --runtime-socket fails the start.
      const prebuilt = new Map<string, NodeRuntime>()
      if (options.node1Runtime !== undefined && options.nodes > 0) prebuilt.set("node-1", yield* Layer.build(options.node1Runtime))
      const mirror = options.p2p === true ? makeSimulatedPeerMirror() : undefined
      if (mirror !== undefined) yield* publishServed(mirror)
      // Every Node, these and any applied later with kubectl, is a simulated node with its daemon.
      const { runtimes } = yield* simulateNodes(prebuilt, mirror === undefined ? options.node : { ...options.node, peerMirror: mirror })
      // Workloads run too: their pods' kubelets pull through the same runtimes as the daemons.
      yield* startWorkloads(runtimes)
      yield* controller.synced
    }).pipe(Effect.provide(inProcess))
    return { url: server.url, kubeconfig: options.kubeconfigOut }
  })

export interface Announced {
  readonly p2p?: boolean
  /** Where /metrics is served (--metrics-port), if it is. */
  readonly metricsUrl?: string | undefined
}

/** What to type next, printed once the cluster is up. */
const nextSteps = (cluster: DevCluster, nodes: number, { metricsUrl, p2p = false }: Announced): string => {
  const header = `preheat dev: API server ${cluster.url}, controller, ${nodes} simulated nodes (node-1..node-${nodes})`
  const served = `metrics of the controller, the daemons${p2p ? " and the simulated registry" : ""}: ${metricsUrl}`
  const lines = [
    "",
    `${header}${p2p ? ", pulling through a peer-to-peer mirror" : ""}`,
    ...(metricsUrl === undefined ? [] : [served]),
    "",
    `  export KUBECONFIG=${cluster.kubeconfig}`,
    "  kubectl get nodes --show-labels",
    "  kubectl apply -f deploy/examples/job-with-always.yaml",
    "  kubectl get ipj -w",
    "  kubectl get nodeimage node-1 -o yaml",
    "  kubectl apply -f deploy/examples/     # every example",
    "  kubectl create deployment web --image=nginx:1.25.3 --replicas=3 --dry-run=client -o yaml | kubectl apply -f -",
    "  kubectl rollout status deploy/web && kubectl get pods -o wide",
    `  kubectl patch nodeimage node-1 --type=merge -p '{"spec":{"images":{"ubuntu":{"tags":[{"tag":"latest","pullPolicy":{"ttlSecondsAfterFinished":300}}]}}}}'`,
    "  kubectl create configmap simulated-registry --from-literal=push-1=nginx:latest   # move a tag in the simulated registry",
    ...(p2p
      ? ["  kubectl get configmap simulated-registry-served -o jsonpath='{.data}'             # what the registry and the peers served"]
      : []),
    ...(p2p && metricsUrl !== undefined ? [`  curl -s ${metricsUrl} | grep '^preheat_simulated_'     # the same totals as counters`] : []),
    "",
    "Ctrl-C stops everything.",
    ""
  ]
  return lines.join("\n")
}

export const announce = (cluster: DevCluster, nodes: number, announced: Announced = {}) => Console.log(nextSteps(cluster, nodes, announced))
