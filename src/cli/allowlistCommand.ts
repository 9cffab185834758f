import { Console, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { loadKubeConfig } from "../../layers/kube/live/kubeConfig.ts"
import { runAllowlist } from "../allowlist/runAllowlist.ts"
import { loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import { version } from "../version.ts"
import { text } from "./flags.ts"

export const allowlistCommand = Command.make(
  "allowlist",
  {
    jobs: Argument.String("job").pipe(
      Argument.withDescription("ImagePullJobs or ImageListPullJobs whose images to list; default: every one in the namespace."),
      Argument.atLeast(0)
    ),
    namespace: text("namespace", "Namespace of the jobs; default: the kubeconfig context's, else default.").pipe(
      Flag.withAlias("n"),
      Flag.optional
    ),
    kubeconfig: text("kubeconfig", "Kubeconfig file; default: $KUBECONFIG, the in-cluster service account, ~/.kube/config.").pipe(
      Flag.optional
    ),
    context: text("context", "Kubeconfig context to use instead of its current-context.").pipe(Flag.optional)
  },
  (flags) =>
    Effect.gen(function* () {
      const source = { kubeconfig: Option.getOrUndefined(flags.kubeconfig), context: Option.getOrUndefined(flags.context) }
      const config = yield* loadKubeConfig(source)
      // As kubectl: -n, else the context's namespace, else default.
      const namespace = Option.getOrElse(flags.namespace, () => config.getContextObject(config.getCurrentContext())?.namespace ?? "default")
      const kube = KubeLive.layer({ ...source, qps: 20, burst: 40, userAgent: `preheat-allowlist/${version}` })
      const yaml = yield* runAllowlist({ namespace, jobs: flags.jobs }).pipe(Effect.provide(kube.pipe(Layer.provide(Metrics.layerTest))))
      yield* Console.log(yaml.trimEnd())
    }).pipe(
      // Warnings only, to stderr: stdout is the YAML.
      Effect.provide(loggingLayer({ format: "text", level: "Warn" }))
    )
).pipe(
  Command.withDescription(
    "Print preloadedImagesVerificationAllowlist entries (and imagePullCredentialsVerificationPolicy NeverVerifyAllowlistedImages) " +
      "for the images of the named jobs, as YAML to merge into the kubelet's configuration: pods then start these images, " +
      "preloaded by preheat, without checking credentials with the registry (KEP-2535)."
  )
)
