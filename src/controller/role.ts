import { Duration, Effect, Option, Result, Schedule } from "effect"
import type { Scope } from "effect"
import { digestMismatch, type ImagePullJob } from "../api/imagePullJob.ts"
import { resolveParallelism } from "../api/parallelism.ts"
import { ApiAccess } from "../kube/ApiAccess.ts"
import { makeLeaderElector } from "../kube/leaderElection.ts"
import type { KubeApi } from "../kube/KubeApi.ts"
import { Metrics } from "../ops/metrics.ts"
import type { JobPhase } from "../ops/metrics.ts"
import { serveOps } from "../ops/server.ts"
import type { WorkerObserver } from "../workqueue/runWorkers.ts"
import type { Scheduler } from "../workqueue/Scheduler.ts"
import type { ControllerSettings } from "./settings.ts"
import { makeController } from "./controller.ts"
import type { Controller } from "./controller.ts"
import type { Decoded } from "./stores.ts"

export interface ControllerRoleOptions {
  readonly settings: ControllerSettings
  readonly leaderElection: {
    readonly namespace: string
    readonly name: string
    readonly identity: string
  }
  readonly metrics: { readonly host: string; readonly port: number }
}

const phaseOf = (nodes: number, job: Decoded<ImagePullJob>): JobPhase => {
  if (Result.isFailure(job)) return "invalid"
  const status = job.success.status
  if (status?.completionTime !== undefined) return "completed"
  if (status?.conditions?.some((c) => c.type === "Valid" && c.status === "False")) return "invalid"
  return resolveParallelism(job.success.spec.parallelism, nodes) === 0 ? "paused" : "running"
}

/**
 * Gauges read from the stores (jobs by phase, nodes pulling), the queues (depth) and what the
 * controller shows of its books (each registry's pull limit, nodes held, and the warmings that
 * ended since, into their histogram), every few seconds.
 */
const sampleGauges = ({ gauges, queues, stores }: Controller) =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const jobs: Record<JobPhase, number> = { running: 0, completed: 0, paused: 0, invalid: 0 }
    let digestMismatches = 0
    for (const { view } of stores.jobs.entries()) {
      jobs[phaseOf(stores.nodeImages.size(), view)]++
      if (Result.isSuccess(view) && view.success.status?.conditions?.some((c) => c.type === digestMismatch && c.status === "True")) {
        digestMismatches++
      }
    }
    yield* metrics.setJobs(jobs)
    yield* metrics.setJobsWithDigestMismatch(digestMismatches)
    let pulling = 0
    for (const { view } of stores.nodeImages.entries()) if ((view.status?.pulling ?? 0) > 0) pulling++
    yield* metrics.setNodesPulling(pulling)
    yield* metrics.setNodesWarming(gauges.nodesWarming())
    yield* metrics.setRegistryPullLimits(gauges.registryPullLimits())
    for (const { outcome, seconds } of gauges.drainEndedWarmings()) yield* metrics.recordNodeWarm(outcome, seconds)
    for (const [name, queue] of Object.entries(queues)) yield* metrics.setWorkqueueDepth(name, yield* queue.size)
  })

/**
 * `preheat controller`: the stores, the ops endpoints, and the reconcilers while this replica
 * holds the Lease. On shutdown the campaign ends, the reconcilers stop and the Lease is released
 * so the next replica takes over at once.
 */
export const runControllerRole = (options: ControllerRoleOptions) =>
  Effect.gen(function* (): Effect.fn.Return<never, unknown, KubeApi | Scheduler | Metrics | Scope.Scope> {
    const metrics = yield* Metrics
    const controller = yield* makeController(options.settings)
    const elector = yield* makeLeaderElector(options.leaderElection)
    // The live client's (KubeLive.layerWithAccess): why the stores are not listed, when the server is why.
    const access = yield* Effect.serviceOption(ApiAccess)
    const ready = Effect.gen(function* () {
      const leadership = yield* elector.status
      return [
        ...(Option.isSome(access) ? [yield* access.value.check] : []),
        {
          name: "informers-synced",
          ok: controller.hasSynced(),
          ...(controller.hasSynced() ? {} : { message: "stores not yet listed" })
        },
        { name: "leadership-known", ok: leadership._tag !== "Unknown", message: leadership._tag }
      ]
    })
    const { port } = yield* serveOps({
      host: options.metrics.host,
      port: options.metrics.port,
      health: Effect.succeed([{ name: "ping", ok: true }]),
      ready
    })
    yield* Effect.logInfo("controller started").pipe(
      Effect.annotateLogs({
        identity: elector.identity,
        opsPort: port,
        lease: `${options.leaderElection.namespace}/${options.leaderElection.name}`
      })
    )
    yield* Effect.forkScoped(Effect.repeat(sampleGauges(controller), Schedule.spaced(Duration.seconds(5))).pipe(Effect.ignore))
    const observe = (name: string): WorkerObserver => ({
      onFinished: (_key, millis, result) => metrics.recordReconcile(name, result, millis / 1000)
    })
    const lead = Effect.gen(function* () {
      yield* metrics.setLeader(true)
      yield* Effect.logInfo("leading: reconciling")
      return yield* controller.reconcile(observe)
    }).pipe(Effect.ensuring(metrics.setLeader(false)))
    return yield* elector.campaign(lead)
  })
