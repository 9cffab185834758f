import { Effect, Layer } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { StrategicPatchLive } from "../../layers/kube/live/strategicPatchLive.ts"
import { loadKubeConfig } from "../../layers/kube/live/kubeConfig.ts"
import { loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import { parseImageSettings } from "../rollout/imageSettings.ts"
import { parseParallelism, parseTimeout } from "../rollout/rolloutFlags.ts"
import { runRollout } from "../rollout/runRollout.ts"
import { parseWorkload } from "../rollout/workloadArgument.ts"
import { streamScreen } from "../statusView/screen.ts"
import { version } from "../version.ts"
import { kubeconfigFlags, kubeconfigSource, namespaceFlag, namespaceOf, text } from "./flags.ts"

const defaultParallelism = "10"

export const rolloutCommand = Command.make(
  "rollout",
  {
    workload: Argument.String("workload").pipe(
      Argument.withDescription("The Deployment, StatefulSet or DaemonSet: deployment/web, deploy/web, sts/db, ds/agent, or TYPE NAME."),
      Argument.between(1, 2)
    ),
    image: text("image", "CONTAINER=IMAGE, as kubectl set image takes it (* for every container); repeat for more containers.").pipe(
      Flag.atLeast(1)
    ),
    timeout: text(
      "timeout",
      "Give up after this long (a duration: 90s, 10m, 1h30m); the workload then stays unchanged. 0: no limit (default 0)."
    ).pipe(Flag.withDefault("0")),
    parallelism: text(
      "parallelism",
      `Nodes pulling one image at once: a number or a percentage of the nodes (default ${defaultParallelism}).`
    ).pipe(Flag.withDefault(defaultParallelism)),
    namespace: namespaceFlag("the workload"),
    ...kubeconfigFlags
  },
  (flags) =>
    Effect.gen(function* () {
      // Arguments first: a typo fails before any request.
      const workload = yield* Effect.fromResult(parseWorkload(flags.workload))
      const settings = yield* Effect.fromResult(parseImageSettings(flags.image))
      const timeout = yield* Effect.fromResult(parseTimeout(flags.timeout))
      const parallelism = yield* Effect.fromResult(parseParallelism(flags.parallelism))
      const source = kubeconfigSource(flags)
      const config = yield* loadKubeConfig(source)
      const namespace = namespaceOf(flags.namespace, config)
      const userAgent = `preheat-rollout/${version}`
      const kube = KubeLive.layer({ ...source, qps: 20, burst: 40, userAgent }).pipe(Layer.provide(Metrics.layerTest))
      return yield* runRollout({ workload, namespace, settings, parallelism, timeout, screen: streamScreen(process.stdout) }).pipe(
        Effect.provide(Layer.mergeAll(kube, StrategicPatchLive.layer(config, userAgent)))
      )
    }).pipe(
      // Warnings only, to stderr: stdout is the view.
      Effect.provide(loggingLayer({ format: "text", level: "Warn" }))
    )
).pipe(
  Command.withDescription(
    "Pre-pull new images on the nodes of a workload's pods (one ImagePullJob per image, with the progress view), " +
      "then set them on the workload as kubectl set image does. A failed or timed-out pre-pull leaves the workload " +
      "unchanged; Ctrl-C deletes the jobs. Also works as the kubectl plugin kubectl-preheat."
  )
)
