import { Duration, Effect, FileSystem, Option } from "effect"
import type { Scope } from "effect"
import { CredentialProviders } from "../cri/credentialProvider/CredentialProviders.ts"
import type { CriRuntime } from "../cri/CriRuntime.ts"
import type { FilesystemStats } from "../cri/FilesystemStats.ts"
import { ApiAccess } from "../kube/ApiAccess.ts"
import type { KubeApi } from "../kube/KubeApi.ts"
import { reflect } from "../kube/reflector.ts"
import { resources } from "../kube/resources.ts"
import { makeStore } from "../kube/store.ts"
import { watcher } from "../kube/watcher.ts"
import { Metrics } from "../ops/metrics.ts"
import { type HealthReport, type OpsServerError, serveOps } from "../ops/server.ts"
import type { Scheduler } from "../workqueue/Scheduler.ts"
import { makeDiskCheck } from "./diskCheck.ts"
import { runtimeCheck, watchCheck } from "./health.ts"
import type { DaemonOptions } from "./options.ts"
import { nodeImageSpecs } from "./nodeImageSpec.ts"
import { watchKubeletConfig } from "./kubeletConfig/watch.ts"
import { makeImagePins } from "./pins/imagePins.ts"
import { makePuller } from "./puller.ts"
import { makeProviderRenewal } from "./providerRenewal/watch.ts"
import { makePullSlots } from "./pullSlots.ts"
import { statusCadence } from "./statusCadence.ts"
import { makeStatusReporter } from "./statusReporter.ts"
import { makeUnreportedGauge, nodeListing } from "./unreportedImages.ts"
import { statusImagesOf } from "../api/nodeStatusImages.ts"
import { withEventCorrelation } from "../kube/events.ts"

/** A running daemon, for the ops endpoint and for tests. */
export interface Daemon {
  /** Resolves once the NodeImage has been listed. */
  readonly synced: Effect.Effect<void>
  readonly hasSynced: () => boolean
  /** Liveness: the runtime answers Version and the NodeImage watch has synced. */
  readonly health: Effect.Effect<HealthReport>
  /** Readiness: the NodeImage watch has synced, and (live client) nothing keeps requests from the API server. */
  readonly ready: Effect.Effect<HealthReport>
  /** Workers running (waiting or pulling), by tag key (`image tag`) and version. */
  readonly running: () => ReadonlyMap<string, number>
}

/**
 * The daemon's work for the life of the scope (SPEC §3): a watch of this node's NodeImage only,
 * pull workers under the per-node cap, the status reporter, image pins (`--pin-images`), and the
 * kubelet's image verification policy (`--kubelet-config`, read with the platform's FileSystem).
 */
export const startDaemon = (
  options: DaemonOptions
): Effect.Effect<Daemon, never, KubeApi | CriRuntime | FilesystemStats | Metrics | Scheduler | Scope.Scope> =>
  // The daemon's own event correlation (eventCorrelation.ts), which its workers' Events go through.
  withEventCorrelation(daemonWork(options))

const daemonWork = Effect.fnUntraced(function* (
  options: DaemonOptions
): Effect.fn.Return<Daemon, never, KubeApi | CriRuntime | FilesystemStats | Metrics | Scheduler | Scope.Scope> {
  const metrics = yield* Metrics
  const services = yield* Effect.context<CriRuntime>()
  const watched = makeStore(resources.nodeImage, { decode: nodeImageSpecs() })
  // Its own Node, for what the kubelet lists of the images the tags hold (unreportedTags.ts,
  // unreportedImages.ts): by name, as the kubelet watches its Node (RBAC cannot name a DaemonSet's
  // node: list and watch of Nodes, deploy/rbac.yaml).
  const node = makeStore(resources.node)
  const reporter = yield* makeStatusReporter({
    nodeName: options.nodeName,
    nodeImages: watched,
    cadence: statusCadence(options),
    listing: nodeListing(() => (node.hasSynced() ? node.get(options.nodeName) : undefined)),
    unreported: {
      maxImages: options.nodeStatusMaxImages,
      graceMs: Duration.toMillis(Duration.fromInputUnsafe(options.unreportedGrace))
    }
  })
  const fs = yield* Effect.serviceOption(FileSystem.FileSystem)
  if (options.kubeletConfig !== undefined && Option.isSome(fs)) {
    yield* watchKubeletConfig({ fs: fs.value, paths: options.kubeletConfig, changed: reporter.setVerification })
  }
  const slots = yield* makePullSlots(options.maxConcurrentPulls, metrics.setPullWorkers)
  const disk = yield* makeDiskCheck(options.minFreeDisk)
  // The image filesystem's figures (metrics, or the log line saying they cannot be read) from the
  // start, not only from the first pull.
  yield* Effect.forkScoped(disk.check)
  // Provided by the command with --image-credential-provider-config; without it, pull secrets only.
  const credentialProviders = Option.getOrUndefined(yield* Effect.serviceOption(CredentialProviders))
  const renewal =
    credentialProviders === undefined ? undefined : yield* makeProviderRenewal(credentialProviders, options.providerRenewalPace)
  const puller = yield* makePuller({
    nodeName: options.nodeName,
    secretNamespace: options.secretNamespace,
    component: options.component,
    slots,
    disk,
    pullProgressTimeoutMillis: Duration.toMillis(Duration.fromInputUnsafe(options.pullProgressTimeout)),
    credentialProviders,
    renewal,
    reporter,
    current: () => watched.get(options.nodeName)
  })
  const pins = yield* makeImagePins({
    nodeName: options.nodeName,
    enabled: options.pinImages,
    current: () => watched.entry(options.nodeName),
    resyncInterval: options.pinResyncInterval
  })
  const unreported = makeUnreportedGauge(metrics.setNodeImagesUnreported)
  const recount = Effect.suspend(() => unreported(watched.get(options.nodeName), node.get(options.nodeName)))
  yield* reflect(watched, watcher(resources.nodeImage, { fieldSelector: `metadata.name=${options.nodeName}` }), () =>
    Effect.suspend(() => {
      const current = watched.entry(options.nodeName)
      return Effect.andThen(puller.sync(current), pins.changed(current)).pipe(Effect.andThen(recount))
    })
  )
  // A heartbeat leaves status.images the same object (the store keeps unchanged parts): nothing to judge again.
  let listed: unknown = null
  const listChanged = Effect.suspend(() => {
    const images = statusImagesOf(node.get(options.nodeName))
    if (images === listed) return Effect.void
    listed = images
    return reporter.listingChanged
  })
  yield* reflect(node, watcher(resources.node, { fieldSelector: `metadata.name=${options.nodeName}` }), () =>
    Effect.andThen(listChanged, recount)
  )
  // Pins are checked once the NodeImage is listed even when there is none: a restarted daemon
  // whose tags went away meanwhile unpins what it pinned.
  yield* Effect.forkScoped(
    Effect.andThen(
      watched.synced,
      Effect.suspend(() => pins.changed(watched.entry(options.nodeName)))
    )
  )
  // The live client's (KubeLive.layerWithAccess): a 401, 403 or TLS failure named, not only "not yet listed".
  const access = yield* Effect.serviceOption(ApiAccess)
  const ready = Option.match(access, {
    onNone: () => Effect.sync((): HealthReport => [watchCheck(watched.hasSynced)]),
    onSome: (access) => Effect.map(access.check, (check): HealthReport => [check, watchCheck(watched.hasSynced)])
  })
  const health = Effect.map(runtimeCheck, (runtime): HealthReport => [runtime, watchCheck(watched.hasSynced)]).pipe(
    Effect.provideContext(services)
  )
  return {
    synced: watched.synced,
    hasSynced: watched.hasSynced,
    health,
    ready,
    running: puller.running
  }
})

/** The daemon plus its ops endpoint; resolves with the bound port once both are up. */
export const serveDaemon = Effect.fnUntraced(function* (
  options: DaemonOptions
): Effect.fn.Return<
  { readonly daemon: Daemon; readonly port: number },
  OpsServerError,
  KubeApi | CriRuntime | FilesystemStats | Metrics | Scheduler | Scope.Scope
> {
  const daemon = yield* startDaemon(options)
  const { port } = yield* serveOps({ host: options.metricsHost, port: options.metricsPort, health: daemon.health, ready: daemon.ready })
  yield* Effect.logInfo("daemon started").pipe(
    Effect.annotateLogs({
      node: options.nodeName,
      opsPort: port,
      maxConcurrentPulls: options.maxConcurrentPulls,
      secretNamespace: options.secretNamespace,
      pinImages: options.pinImages,
      minFreeDisk: options.minFreeDisk.text,
      pullProgressTimeout: Duration.format(Duration.fromInputUnsafe(options.pullProgressTimeout)),
      kubeletConfig: options.kubeletConfig?.file ?? "not read"
    })
  )
  return { daemon, port }
})

/**
 * `preheat daemon`: the daemon and its ops endpoint, until interrupted. The command provides every
 * service: the runtime (the live CRI one, or the simulated one), KubeApi, Metrics and Scheduler.
 */
export const runDaemon = (
  options: DaemonOptions
): Effect.Effect<never, OpsServerError, KubeApi | CriRuntime | FilesystemStats | Metrics | Scheduler> =>
  Effect.gen(function* () {
    yield* serveDaemon(options)
    return yield* Effect.never
  }).pipe(Effect.scoped)
