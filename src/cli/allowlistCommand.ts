import { Console, Effect, Layer } from "effect"
import { Argument, Command } from "effect/cli"
import { KubeLive } from "../../layers/kube/live/kubeLive.ts"
import { loadKubeConfig } from "../../layers/kube/live/kubeConfig.ts"
import { runAllowlist } from "../allowlist/runAllowlist.ts"
import { loggingLayer } from "../ops/logging.ts"
import { Metrics } from "../ops/metrics.ts"
import { version } from "../version.ts"
import { kubeconfigFlags, kubeconfigSource, namespaceFlag, namespaceOf } from "./flags.ts"

export const allowlistCommand = Command.make(
  "allowlist",
  {
    jobs: Argument.String("job").pipe(
      Argument.withDescription("ImagePullJobs or ImageListPullJobs whose images to list; default: every one in the namespace."),
      Argument.atLeast(0)
    ),
    namespace: namespaceFlag("the jobs"),
    ...kubeconfigFlags
  },
  (flags) =>
    Effect.gen(function* () {
      const source = kubeconfigSource(flags)
      const config = yield* loadKubeConfig(source)
      const namespace = namespaceOf(flags.namespace, config)
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
