import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { portNumber, text } from "../../src/cli/flags.ts"
import { harnessDescriptions } from "../../src/cli/harnessListing.ts"

const flags = {
  host: text("host", "Address to listen on; plain http, so loopback unless you mean it (default 127.0.0.1).").pipe(
    Flag.withDefault("127.0.0.1")
  ),
  port: Flag.Int("port").pipe(
    Flag.withDescription("Port to listen on; 0 picks a free one (default 0)."),
    Flag.withDefault(0),
    portNumber()
  ),
  token: text("token", "Bearer token every request must carry (default: none, anyone may call).").pipe(Flag.optional),
  kubeconfigOut: text("kubeconfig-out", "Write a kubeconfig for this server (kubectl, client-node) to this file.").pipe(Flag.optional),
  webhookValidation: Flag.Boolean("webhook-validation").pipe(
    Flag.withDescription(
      "Also reject what the controller would mark invalid (image references, selectors), as a validating webhook would."
    ),
    Flag.withDefault(false)
  ),
  workloads: Flag.Boolean("workloads").pipe(
    Flag.withDescription(
      "Also run preheat dev's stand-ins for kube-controller-manager and kube-scheduler (Deployment, ReplicaSet, " +
        "StatefulSet and DaemonSet controllers; a scheduler that respects taints); pods are bound, but stay Pending here."
    ),
    Flag.withDefault(false)
  )
}

export type ApiserverFlags = Command.Command.Config.Infer<typeof flags>

/** `preheat apiserver`'s flags and help; the server itself (runApiserver.ts) is loaded when it runs. */
export const apiserverCommand = Command.make("apiserver", flags, (input) =>
  Effect.flatMap(
    Effect.promise(() => import("./runApiserver.ts")),
    ({ runApiserver }) => runApiserver(input)
  )
).pipe(Command.withDescription(harnessDescriptions.apiserver))
