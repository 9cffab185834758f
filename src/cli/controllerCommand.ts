import { Data, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { eraserExclusionNamespaceFlag, integer, kubeconfigFlags, kubeconfigSource, port, text } from "./flags.ts"
import { KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { defaultSettings } from "../controller/settings.ts"
import { autoscalerStartupTaintPrefix, defaultWarmTaintKey } from "../api/warmTaint.ts"
import { runControllerRole } from "../controller/role.ts"
import { parseGoDuration } from "../api/goDuration.ts"
import { validateQualifiedName } from "../api/objectNames.ts"
import { candidateIdentity } from "../kube/leaderElection.ts"
import { controllerRateLimit } from "../../layers/kube/live/rateLimiter.ts"
import { logFormatFlag, loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import { version } from "../version.ts"
import { parseSeedCount, seedCountGrammar, seedNodesAnnotation } from "../controller/imagePullJob/seedNodes.ts"

class InvalidWarmTimeout extends Data.TaggedError("InvalidWarmTimeout")<{ readonly value: string }> {
  override get message() {
    return `invalid argument "${this.value}" for "--warm-timeout" flag: a positive duration such as 90s, 10m, 1h30m`
  }
}

class InvalidWarmTaintKey extends Data.TaggedError("InvalidWarmTaintKey")<{ readonly value: string; readonly problems: string }> {
  override get message() {
    return `invalid argument "${this.value}" for "--warm-taint-key" flag: a taint key is a qualified name: ${this.problems}`
  }
}

class InvalidSeedNodes extends Data.TaggedError("InvalidSeedNodes")<{ readonly value: string }> {
  override get message() {
    return `invalid argument "${this.value}" for "--seed-nodes" flag: ${seedCountGrammar}`
  }
}

class InvalidRegistryLimit extends Data.TaggedError("InvalidRegistryLimit")<{ readonly value: number }> {
  override get message() {
    return `--max-concurrent-pulls-per-registry must be at least 1, got ${this.value}`
  }
}

export const controllerCommand = Command.make(
  "controller",
  {
    ...kubeconfigFlags,
    leaseNamespace: text("leader-election-namespace", "Namespace of the leader-election Lease.").pipe(Flag.withDefault("preheat-system")),
    leaseName: text("leader-election-name", "Name of the leader-election Lease.").pipe(Flag.withDefault("preheat-controller")),
    secretNamespace: text("secret-namespace", "Namespace the daemons read pull-secret copies from.").pipe(
      Flag.withDefault(defaultSettings.secretNamespace)
    ),
    metricsHost: text("metrics-host", "Address of /healthz, /readyz and /metrics.").pipe(Flag.withDefault("0.0.0.0")),
    metricsPort: port("metrics-port", "Port of /healthz, /readyz and /metrics", 8080),
    workers: integer("workers", "Objects each reconciler works on at once", defaultSettings.workers),
    qps: integer("kube-api-qps", "Requests per second to the API server", controllerRateLimit.qps),
    burst: integer("kube-api-burst", "Requests allowed in a burst", controllerRateLimit.burst),
    nodeReadyDelay: integer("node-ready-delay-seconds", "Seconds a Node is Ready before it gets a NodeImage", 30),
    maxPullsPerRegistry: Flag.Int("max-concurrent-pulls-per-registry").pipe(
      Flag.withDescription(
        "At most this many nodes pull from one registry host at once, across all jobs; the rest wait (default: no limit). " +
          "A registry that throttles (nodes report HTTP 429) gets a lower limit for a while, halved per burst and raised by one per limit's worth of successful pulls, never above this."
      ),
      Flag.optional
    ),
    warmTaintKey: text(
      "warm-taint-key",
      "Key of the NoSchedule startup taint preheat removes once every job that must warm a new node succeeded on it " +
        `(with the cluster autoscaler, one under ${autoscalerStartupTaintPrefix}).`
    ).pipe(Flag.withDefault(defaultWarmTaintKey)),
    warmTimeout: text(
      "warm-timeout",
      "Longest a node is held by that taint, from its first sighting, before it is released anyway (a duration) (default 10m)."
    ).pipe(Flag.withDefault("10m")),
    seedNodes: text(
      "seed-nodes",
      "Seed nodes of every job without the annotation " +
        `${seedNodesAnnotation}: a count or a percentage of its nodes that pull first, the others once they succeeded ` +
        "(for peer-to-peer mirrors such as Spegel) (default: none)."
    ).pipe(Flag.optional),
    eraserExclusionNamespace: eraserExclusionNamespaceFlag,
    logFormat: logFormatFlag
  },
  (flags) =>
    Effect.gen(function* () {
      const maxPullsPerRegistry = Option.getOrUndefined(flags.maxPullsPerRegistry)
      if (maxPullsPerRegistry !== undefined && maxPullsPerRegistry < 1) {
        return yield* Effect.fail(new InvalidRegistryLimit({ value: maxPullsPerRegistry }))
      }
      const keyProblems = validateQualifiedName(flags.warmTaintKey)
      if (keyProblems.length > 0) {
        return yield* Effect.fail(new InvalidWarmTaintKey({ value: flags.warmTaintKey, problems: keyProblems.join("; ") }))
      }
      const warmTimeoutMs = parseGoDuration(flags.warmTimeout)
      if (warmTimeoutMs === undefined || warmTimeoutMs <= 0) return yield* Effect.fail(new InvalidWarmTimeout({ value: flags.warmTimeout }))
      const seedValue = Option.getOrUndefined(flags.seedNodes)
      const seedNodes = seedValue === undefined ? undefined : parseSeedCount(seedValue)
      if (seedValue !== undefined && seedNodes === undefined) return yield* Effect.fail(new InvalidSeedNodes({ value: seedValue }))
      const identity = yield* candidateIdentity(process.env["POD_NAME"])
      const kube = KubeLive.layerWithAccess({
        ...kubeconfigSource(flags),
        qps: flags.qps,
        burst: flags.burst,
        userAgent: `preheat-controller/${version}`
      })
      return yield* runControllerRole({
        settings: {
          ...defaultSettings,
          secretNamespace: flags.secretNamespace,
          workers: flags.workers,
          nodeReadyDelayMs: flags.nodeReadyDelay * 1000,
          maxConcurrentPullsPerRegistry: maxPullsPerRegistry,
          warmTaintKey: flags.warmTaintKey,
          warmTimeoutMs,
          seedNodes,
          eraserExclusionNamespace: Option.getOrUndefined(flags.eraserExclusionNamespace)
        },
        leaderElection: { namespace: flags.leaseNamespace, name: flags.leaseName, identity },
        metrics: { host: flags.metricsHost, port: flags.metricsPort }
      }).pipe(
        Effect.scoped,
        Effect.provide(Layer.mergeAll(kube, SchedulerLive.layerWithMetrics).pipe(Layer.provideMerge(Metrics.layer))),
        Effect.provide(loggingLayer({ format: flags.logFormat }))
      )
    })
).pipe(
  Command.withDescription(
    "Run the controller: NodeImages per Node, ImagePullJobs and ImageListPullJobs into per-node tasks, " +
      "pull-secret copies; leader-elected on a Lease, with /healthz, /readyz and /metrics."
  )
)
