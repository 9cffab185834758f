import { Clock, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { rfc3339 } from "../../src/api/time.ts"
import type { SimulatedDisk } from "../layers/simulatedRuntime/config.ts"
import { simulatedNodeLayer } from "../layers/simulatedRuntime/simulatedNode.ts"
import { startDaemon } from "../../src/daemon/daemon.ts"
import type { Daemon } from "../../src/daemon/daemon.ts"
import type { MinFreeDisk } from "../../src/daemon/minFreeDisk.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { devNode, readyStatus } from "../cluster/devNodes.ts"
import type { KubeError } from "../../src/kube/errors.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import type { Metrics } from "../../src/ops/metrics.ts"
import type { Scheduler } from "../../src/workqueue/Scheduler.ts"

export interface FleetOptions {
  /** The nodes: node-(first+1) .. node-(first+count) (the names and labels of `preheat dev`). */
  readonly first: number
  readonly count: number
  readonly maxConcurrentPulls: number
  readonly secretNamespace: string
  readonly minFreeDisk: MinFreeDisk
  /** Each node's image disk, which its pulls fill. */
  readonly disk: SimulatedDisk
}

/**
 * `preheat fleet`: N simulated nodes in one process, each registered as a Ready Node (as its
 * kubelet would) and each running the daemon exactly as `preheat simulated-daemon` does:
 * its own watch of its own NodeImage and its own status writes, over the API client it is given.
 * Only the process (and the connection pool) is shared, so the API server and the controller see
 * what N daemons cost them.
 */
export const startFleet = (
  options: FleetOptions
): Effect.Effect<ReadonlyArray<Daemon>, KubeError, KubeApi | Metrics | Scheduler | Scope.Scope> =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    // Ready long enough ago that the controller gives each node its NodeImage at once.
    const since = rfc3339((yield* Clock.currentTimeMillis) - 3_600_000)
    const indices = Array.from({ length: options.count }, (_, i) => options.first + i)
    yield* Effect.forEach(
      indices,
      (i) =>
        Effect.gen(function* () {
          const node = devNode(i)
          yield* api.create(resources.node, node).pipe(Effect.catchTag("AlreadyExists", () => Effect.void))
          yield* api.patch(resources.node, { name: node.metadata.name ?? "" }, readyStatus(since), "status")
        }),
      { concurrency: 16, discard: true }
    )
    return yield* Effect.forEach(indices, (i) =>
      Effect.gen(function* () {
        // Built in the fleet's scope: each node keeps its own runtime (its images, its pulls).
        const runtime = yield* Layer.build(simulatedNodeLayer({ disk: options.disk }))
        return yield* startDaemon(
          daemonOptions({
            nodeName: `node-${i + 1}`,
            maxConcurrentPulls: options.maxConcurrentPulls,
            secretNamespace: options.secretNamespace,
            minFreeDisk: options.minFreeDisk
          })
        ).pipe(Effect.provideContext(runtime))
      })
    )
  })
