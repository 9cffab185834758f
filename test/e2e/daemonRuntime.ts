import { type Duration, Effect, Layer, ManagedRuntime } from "effect"
import * as CriLive from "../../layers/cri/live/criLive.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import type { FilesystemStats } from "../../src/cri/FilesystemStats.ts"
import type { ImageLabels } from "../../src/cri/ImageLabels.ts"
import type { KubeApi } from "../../src/kube/KubeApi.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import type { Scheduler } from "../../src/workqueue/Scheduler.ts"
import type { E2eRuntime } from "./e2eEnv.ts"

/** What an in-process daemon needs: an in-memory API server, the live CRI client to the e2e containerd (image labels for pins), metrics, queues. */
export type DaemonServices = KubeApi | CriRuntime | ImageLabels | FilesystemStats | Metrics | Scheduler

/**
 * The services of the e2e suites that run daemons in process against the real containerd. Logs
 * go to `logs` when given (at Debug, for suites that read them), else nowhere but warnings' absence.
 */
export const daemonRuntime = (
  e: E2eRuntime,
  options: { readonly progressInterval?: Duration.Input; readonly logs?: Array<string> } = {}
): ManagedRuntime.ManagedRuntime<DaemonServices, unknown> => {
  const logs = options.logs
  return ManagedRuntime.make(
    Layer.mergeAll(
      InMemoryKubeApi.layer,
      CriLive.layer({ socket: e.socket, progressInterval: options.progressInterval }),
      Metrics.layerTest,
      SchedulerLive.layer(),
      logs === undefined
        ? loggingLayer({ format: "json", level: "Warn", sink: () => {} })
        : loggingLayer({ format: "json", level: "Debug", sink: (line) => logs.push(line) })
    )
  )
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
