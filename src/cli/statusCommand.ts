import { Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { loadKubeConfig } from "../../layers/kube/live/kubeConfig.ts"
import { defaultWarmTaintKey } from "../api/warmTaint.ts"
import { loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import { runStatus } from "../statusView/runStatus.ts"
import { streamScreen } from "../statusView/screen.ts"
import { version } from "../version.ts"
import { kubeconfigFlags, kubeconfigSource, namespaceFlag, namespaceOf, text } from "./flags.ts"

export const statusCommand = Command.make(
  "status",
  {
    job: Argument.String("job").pipe(
      Argument.withDescription("One ImagePullJob or ImageListPullJob (with its child jobs); default: all in the namespace."),
      Argument.optional
    ),
    namespace: namespaceFlag("the jobs"),
    watch: Flag.Boolean("watch").pipe(
      Flag.withAlias("w"),
      Flag.withDescription("Keep watching and redraw on changes (Ctrl-C to stop)."),
      Flag.withDefault(false)
    ),
    ...kubeconfigFlags,
    warmTaintKey: text("warm-taint-key", "The controller's startup taint key: the nodes it holds are listed with their pulls.").pipe(
      Flag.withDefault(defaultWarmTaintKey)
    )
  },
  (flags) =>
    Effect.gen(function* () {
      const source = kubeconfigSource(flags)
      const config = yield* loadKubeConfig(source)
      const namespace = namespaceOf(flags.namespace, config)
      const kube = KubeLive.layer({ ...source, qps: 20, burst: 40, userAgent: `preheat-status/${version}` })
      return yield* runStatus({
        namespace,
        job: Option.getOrUndefined(flags.job),
        watch: flags.watch,
        warmTaintKey: flags.warmTaintKey,
        screen: streamScreen(process.stdout)
      }).pipe(Effect.scoped, Effect.provide(kube.pipe(Layer.provide(Metrics.layerTest))))
    }).pipe(
      // Warnings only, to stderr: stdout is the view.
      Effect.provide(loggingLayer({ format: "text", level: "Warn" }))
    )
).pipe(
  Command.withDescription(
    "Show the progress of ImagePullJobs and ImageListPullJobs: a bar, counts, ETA and the nodes pulling or failed. " +
      "Plain text when stdout is not a terminal. Also works as the kubectl plugin kubectl-preheat."
  )
)
