import { type Duration, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll } from "vitest"
import { type CredentialProviderFlags, credentialProvidersLayer } from "../../layers/cri/live/credentialProviderPlugins.ts"
import * as CriLive from "../../layers/cri/live/criLive.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import type { FilesystemStats } from "../../src/cri/FilesystemStats.ts"
import type { ImageLabels } from "../../src/cri/ImageLabels.ts"
import { startDaemon } from "../../src/daemon/daemon.ts"
import type { DaemonOptions } from "../../src/daemon/options.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import type { Scheduler } from "../../src/workqueue/Scheduler.ts"
import type { E2eRuntime } from "./e2eEnv.ts"

/** What an in-process daemon needs: an in-memory API server, the live CRI client to the e2e containerd (image labels for pins), metrics, queues. */
export type DaemonServices = KubeApi | CriRuntime | ImageLabels | FilesystemStats | Metrics | Scheduler

export interface DaemonRuntimeOptions {
  readonly progressInterval?: Duration.Input
  /** Where the log lines go (at Debug, for suites that read them); else nowhere, at Warn. */
  readonly logs?: Array<string>
  /** The credential provider plugins the daemons run, as `--image-credential-provider-config` sets them up. */
  readonly credentialProviders?: CredentialProviderFlags
}

/** The services of the e2e suites that run daemons in process against the real containerd. */
const daemonRuntime = (e: E2eRuntime, options: DaemonRuntimeOptions): ManagedRuntime.ManagedRuntime<DaemonServices, unknown> => {
  const logs = options.logs
  const services = Layer.mergeAll(
    InMemoryKubeApi.layer,
    CriLive.layer({ socket: e.socket, progressInterval: options.progressInterval }),
    Metrics.layerTest,
    SchedulerLive.layer(),
    logs === undefined
      ? loggingLayer({ format: "json", level: "Warn", sink: () => {} })
      : loggingLayer({ format: "json", level: "Debug", sink: (line) => logs.push(line) })
  )
  const providers = options.credentialProviders
  return ManagedRuntime.make(providers === undefined ? services : credentialProvidersLayer(providers).pipe(Layer.provideMerge(services)))
}

/** Removes from containerd every image whose tags or digests carry this run's suffix (`-<run>`). */
export const removeRunImages = (run: string) =>
  Effect.flatMap(Effect.service(CriRuntime), (cri) =>
    Effect.flatMap(cri.listImages, (images) =>
      Effect.forEach(
        images.filter((i) => [...i.repoTags, ...i.repoDigests].some((n) => n.includes(`-${run}`))),
        (i) => cri.removeImage(i.id),
        { discard: true }
      )
    )
  )

export interface InProcessDaemons {
  /** Runs `effect` with the suite's services. */
  readonly exec: <A, E>(effect: Effect.Effect<A, E, DaemonServices>) => Promise<A>
  /** The in-memory API server the daemons watch (from the suite's first test on). */
  readonly api: KubeApi["Service"]
  /** Runs `body` while a daemon with `options` runs in process (started and synced first), stopped afterwards. */
  readonly withDaemon: <A>(options: DaemonOptions, body: () => Promise<A>) => Promise<A>
  /** The status of `image`'s `tag` in `node`'s NodeImage, when there is one. */
  readonly tagStatus: (node: string, image: string, tag: string) => Promise<ImageTagStatus | undefined>
}

/**
 * For a suite (call it in the describe block) that runs daemons in process against the real
 * containerd: its services are made before its tests; after them the images of this run (named
 * with `-<run>`) are removed from containerd and the services closed.
 */
export const inProcessDaemons = (e: E2eRuntime, run: string, options: DaemonRuntimeOptions = {}): InProcessDaemons => {
  let runtime: ManagedRuntime.ManagedRuntime<DaemonServices, unknown> | undefined
  let api: KubeApi["Service"] | undefined
  const exec = <A, E>(effect: Effect.Effect<A, E, DaemonServices>): Promise<A> => {
    if (runtime === undefined) throw new Error("the suite's services are made in its beforeAll")
    return runtime.runPromise(effect)
  }
  beforeAll(async () => {
    runtime = daemonRuntime(e, options)
    api = await exec(Effect.service(KubeApi))
  })
  afterAll(async () => {
    await exec(removeRunImages(run)).finally(() => runtime?.dispose())
  })
  const kube = (): KubeApi["Service"] => {
    if (api === undefined) throw new Error("the suite's services are made in its beforeAll")
    return api
  }
  return {
    exec,
    get api() {
      return kube()
    },
    withDaemon: async (daemonOptions, body) => {
      const scope = await exec(Scope.make())
      try {
        const daemon = await exec(startDaemon(daemonOptions).pipe(Scope.provide(scope)))
        await exec(daemon.synced)
        return await body()
      } finally {
        await exec(Scope.close(scope, Exit.void))
      }
    },
    tagStatus: async (node, image, tag) => {
      const object = await exec(kube().get(resources.nodeImage, { name: node }))
      const status = object["status"] as { imageStatuses?: Record<string, { tags: ReadonlyArray<ImageTagStatus> }> } | undefined
      return status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag)
    }
  }
}
