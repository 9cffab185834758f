import { Console, Effect, FileSystem, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { text } from "./flags.ts"
import { startEmbeddedApiServer } from "../../apiserver/embeddedApiServer.ts"
import { kubeconfigFor } from "../../apiserver/http/kubeconfig.ts"

export const apiserverCommand = Command.make(
  "apiserver",
  {
    host: text("host", "Address to listen on; plain http, so loopback unless you mean it (default 127.0.0.1).").pipe(
      Flag.withDefault("127.0.0.1")
    ),
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on; 0 picks a free one (default 0)."), Flag.withDefault(0)),
    token: text("token", "Bearer token every request must carry (default: none, anyone may call).").pipe(Flag.optional),
    kubeconfigOut: text("kubeconfig-out", "Write a kubeconfig for this server (kubectl, client-node) to this file.").pipe(Flag.optional),
    webhookValidation: Flag.Boolean("webhook-validation").pipe(
      Flag.withDescription(
        "Also reject what the controller would mark invalid (image references, selectors), as a validating webhook would."
      ),
      Flag.withDefault(false)
    )
  },
  (flags) =>
    Effect.gen(function* () {
      const token = Option.getOrUndefined(flags.token)
      const server = yield* startEmbeddedApiServer({
        host: flags.host,
        port: flags.port,
        ...(token === undefined ? {} : { token }),
        decoderAdmission: flags.webhookValidation
      })
      if (Option.isSome(flags.kubeconfigOut)) {
        const fs = yield* FileSystem.FileSystem
        const config = kubeconfigFor({ url: server.url, ...(token === undefined ? {} : { token }) })
        yield* fs.writeFileString(flags.kubeconfigOut.value, config, { mode: 0o600 })
        yield* Console.error(`wrote ${flags.kubeconfigOut.value}`)
      }
      yield* Console.log(`preheat apiserver listening on ${server.url}`)
      // Until SIGINT or SIGTERM interrupts it; the scope then closes the server.
      return yield* Effect.never
    }).pipe(Effect.scoped)
).pipe(
  Command.withDescription(
    "Run a throwaway in-memory Kubernetes API server for Namespace, Node, Pod, Secret, Event, Lease and the " +
      "ImagePullJob, ImageListPullJob, NodeImage and AdvancedCronJob CRDs, over plain http (kubectl and client-node work against it)."
  )
)
