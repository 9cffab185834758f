/**
 * A daemon in a process of its own: KubeApi over IPC from the parent (ipcKubeApi.ts), the live CRI
 * layer on the given socket, the real Metrics and work queues. The parent starts it with
 * daemonProcess.ts; argv[2] is the JSON of ChildOptions. It tells the parent when it is ready
 * and each time it asks the runtime for a pull.
 */
import { Duration, Effect, Layer } from "effect"
import * as CriLive from "../../../layers/cri/live/criLive.ts"
import { filesystemStatsAt } from "../../../layers/cri/live/filesystemStats.ts"
import { SchedulerLive } from "../../../layers/scheduler.ts"
import { CriRuntime } from "../../../src/cri/CriRuntime.ts"
import { FilesystemStats } from "../../../src/cri/FilesystemStats.ts"
import { serveDaemon } from "../../../src/daemon/daemon.ts"
import { daemonOptions, type DaemonOptions } from "../../../src/daemon/options.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import { loggingLayer } from "../../../src/ops/logging.ts"
import { Metrics } from "../../../src/ops/metrics.ts"
import { ipcKubeApi, notifyParent } from "./ipcKubeApi.ts"

export interface ChildOptions {
  readonly daemon: Pick<DaemonOptions, "nodeName"> &
    Partial<Omit<DaemonOptions, "progressWriteInterval">> & {
      readonly progressWriteIntervalMillis?: number
    }
  readonly socket: string
  readonly progressIntervalMillis?: number
}

const options = JSON.parse(process.argv[2] ?? "{}") as ChildOptions

/** The live runtime, telling the parent about every pull it is asked for. */
const runtime = Layer.effect(
  CriRuntime,
  Effect.map(
    CriLive.make({
      socket: options.socket,
      ...(options.progressIntervalMillis === undefined ? {} : { progressInterval: Duration.millis(options.progressIntervalMillis) })
    }),
    (live) =>
      CriRuntime.of({
        ...live,
        pullImage: (request) =>
          Effect.andThen(
            Effect.sync(() => notifyParent({ type: "pull", image: request.image })),
            live.pullImage(request)
          )
      })
  )
)

const { progressWriteIntervalMillis, ...daemon } = options.daemon

const program = Effect.gen(function* () {
  const { daemon: running, port } = yield* serveDaemon(
    daemonOptions({
      metricsHost: "127.0.0.1",
      metricsPort: 0,
      ...daemon,
      ...(progressWriteIntervalMillis === undefined ? {} : { progressWriteInterval: Duration.millis(progressWriteIntervalMillis) })
    })
  )
  yield* running.synced
  notifyParent({ type: "ready", port, pid: process.pid })
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.provide(
    Layer.mergeAll(
      Layer.succeed(KubeApi, ipcKubeApi()),
      runtime,
      Layer.succeed(FilesystemStats, filesystemStatsAt("/")),
      Metrics.layer,
      SchedulerLive.layer(),
      loggingLayer({ format: "json" })
    )
  )
)

// The parent going away (or closing the channel) ends the daemon, as a pod's deletion would.
process.on("disconnect", () => process.exit(0))

Effect.runPromise(program).catch((error: unknown) => {
  process.stderr.write(`daemon child failed: ${String(error)}\n`)
  process.exit(1)
})
