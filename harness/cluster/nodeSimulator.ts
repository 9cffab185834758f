// kwok's idea for `preheat dev`: every Node in the cluster is a simulated node. A Node that
// appears (the dev cluster's own, or one created with `kubectl apply`, with or without taints)
// gets a container runtime and a preheat daemon of its own, and is reported Ready as its kubelet
// would; a Node deleted takes its daemon and runtime with it.
import { Clock, Context, Duration, Effect, Exit, Layer, Scope } from "effect"
import { rfc3339 } from "../../src/api/time.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import type { FilesystemStats } from "../../src/cri/FilesystemStats.ts"
import type { ImageLabels } from "../../src/cri/ImageLabels.ts"
import { startDaemon } from "../../src/daemon/daemon.ts"
import type { MinFreeDisk } from "../../src/daemon/minFreeDisk.ts"
import { daemonOptions, defaultDaemonOptions } from "../../src/daemon/options.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { reflect } from "../../src/kube/reflector.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeStore } from "../../src/kube/store.ts"
import type { Change } from "../../src/kube/store.ts"
import { watcher } from "../../src/kube/watcher.ts"
import type { CredentialProviders } from "../../src/cri/credentialProvider/CredentialProviders.ts"
import type { Metrics } from "../../src/ops/metrics.ts"
import type { Scheduler } from "../../src/workqueue/Scheduler.ts"
import type { SimulatedDisk } from "../layers/simulatedRuntime/config.ts"
import { simulatedNodeLayer } from "../layers/simulatedRuntime/simulatedNode.ts"
import type { PeerMirror } from "../layers/simulatedRuntime/peerMirror.ts"
import { followTagMoves } from "./devRegistry.ts"
import { reportNodeImages } from "./kubeletImageList.ts"
import { readyStatus } from "./devNodes.ts"
import { isNodeReady } from "./workloadStandIns/objects.ts"

/** How long after a pull a simulated node's daemon expects its kubelet to list the image: two of the kubelet's status periods. */
const simulatedKubeletGrace = Duration.seconds(20)

/** A node's runtime services, built already (a real runtime given on the command line) or to build. */
export type NodeRuntime = Context.Context<CriRuntime | ImageLabels | FilesystemStats>

/**
 * How each simulated node is set up: its daemon's --min-free-disk and --pull-progress-timeout
 * (default 2m), its disk (default 1 TiB), its daemon's credential providers (`preheat dev
 * --image-credential-provider-config`), each node with its own, as each node's daemon has (its own
 * cache, its own runs), and its kubelet's nodeStatusMaxImages (default 50), its daemon's too.
 */
export interface SimulatedNodeOptions {
  readonly minFreeDisk: MinFreeDisk
  readonly pullProgressTimeout?: Duration.Input
  readonly disk?: SimulatedDisk
  readonly credentialProviders?: Layer.Layer<CredentialProviders, unknown, Metrics>
  /** `preheat dev --p2p`: the mirror every simulated node pulls through (a real runtime of node-1 does not). */
  readonly peerMirror?: PeerMirror
  readonly nodeStatusMaxImages?: number
}

export interface SimulatedNodes {
  /** Each simulated node's container runtime, by node name: what its daemon and its "kubelet" pull through. */
  readonly runtimes: ReadonlyMap<string, CriRuntime["Service"]>
}

/**
 * Simulates every Node for the life of the scope; resolves once the Nodes there at start have
 * their daemons. `prebuilt`: runtimes built beforehand for some nodes (node-1's real one), used
 * for the first Node of that name; every other node gets its own simulated runtime.
 */
export const simulateNodes = Effect.fnUntraced(function* (
  prebuilt: ReadonlyMap<string, NodeRuntime>,
  nodeOptions: SimulatedNodeOptions = { minFreeDisk: defaultDaemonOptions.minFreeDisk }
): Effect.fn.Return<SimulatedNodes, never, KubeApi | Metrics | Scheduler | Scope.Scope> {
  const parent = yield* Effect.scope
  const services = yield* Effect.context<KubeApi | Metrics | Scheduler>()
  const api = yield* KubeApi
  const runtimes = new Map<string, CriRuntime["Service"]>()
  const scopes = new Map<string, Scope.Closeable>()
  const unused = new Map(prebuilt)
  // One registry for every simulated node, its tags moved by kubectl (devRegistry.ts).
  const tagRevision = yield* followTagMoves()

  const join = (node: KubeObject) =>
    Effect.gen(function* () {
      const name = node.metadata.name ?? ""
      if (scopes.has(name)) return
      const scope = yield* Scope.fork(parent)
      scopes.set(name, scope)
      let runtime = unused.get(name)
      unused.delete(name)
      runtime ??= yield* Layer.buildWithScope(
        simulatedNodeLayer({
          tagRevision,
          ...(nodeOptions.disk === undefined ? {} : { disk: nodeOptions.disk }),
          ...(nodeOptions.peerMirror === undefined ? {} : { peers: { mirror: nodeOptions.peerMirror, node: name } })
        }),
        scope
      )
      const providers =
        nodeOptions.credentialProviders === undefined
          ? Context.empty()
          : yield* Layer.buildWithScope(nodeOptions.credentialProviders, scope).pipe(
              Effect.provideContext(services),
              // Checked when `dev` started: a file changed since only costs this node its providers.
              Effect.catchCause((cause) =>
                Effect.as(
                  Effect.logError("credential providers not started on this node").pipe(Effect.annotateLogs({ node: name, cause })),
                  Context.empty()
                )
              )
            )
      const pullProgressTimeout = nodeOptions.pullProgressTimeout
      const maxImages = nodeOptions.nodeStatusMaxImages
      yield* startDaemon(
        daemonOptions({
          nodeName: name,
          minFreeDisk: nodeOptions.minFreeDisk,
          ...(pullProgressTimeout === undefined ? {} : { pullProgressTimeout }),
          // Its kubelet's cap (below), and its lag: it lists the node's images within 10 s (kubeletImageList.ts).
          ...(maxImages === undefined ? {} : { nodeStatusMaxImages: maxImages }),
          unreportedGrace: simulatedKubeletGrace
        })
      ).pipe(Effect.provideContext(Context.merge(Context.merge(services, runtime), providers)), Scope.provide(scope))
      runtimes.set(name, Context.get(runtime, CriRuntime))
      // Its kubelet lists the node's images in its status, as the scheduler reads them.
      yield* reportNodeImages(name, Context.get(runtime, CriRuntime), nodeOptions.nodeStatusMaxImages).pipe(
        Scope.provide(scope),
        Effect.provideService(KubeApi, api)
      )
      // The kubelet reports its node Ready once it runs: a Node written by hand has no status yet.
      if (!isNodeReady(node)) {
        const since = rfc3339(yield* Clock.currentTimeMillis)
        yield* api.patch(resources.node, { name }, readyStatus(since), "status").pipe(Effect.ignore)
      }
      yield* Effect.logInfo("simulated node joined").pipe(Effect.annotateLogs({ node: name }))
    })

  const leave = (name: string) =>
    Effect.gen(function* () {
      const scope = scopes.get(name)
      if (scope === undefined) return
      scopes.delete(name)
      runtimes.delete(name)
      yield* Scope.close(scope, Exit.void)
      yield* Effect.logInfo("simulated node left").pipe(Effect.annotateLogs({ node: name }))
    })

  const store = makeStore(resources.node)
  yield* reflect(store, watcher(resources.node, {}), (change: Change) =>
    change.type === "deleted" ? leave(change.old.raw.metadata.name ?? "") : join(change.current.raw)
  )
  yield* store.synced
  return { runtimes }
})
