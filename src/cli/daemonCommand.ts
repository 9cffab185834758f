import { Option } from "effect"
import { Command, Flag } from "effect/cli"
import { daemonFlags } from "./daemonFlags.ts"
import { text } from "./flags.ts"
import { runDaemonCommand } from "./runDaemonCommand.ts"
import * as CriLive from "../../layers/cri/live/criLive.ts"

/** `preheat daemon`: the daemon on a node, pulling through the node's CRI runtime. */
export const daemonCommand = Command.make(
  "daemon",
  daemonFlags({
    runtimeSocket: text(
      "runtime-socket",
      "CRI socket (path or unix:// URL); default: the first that answers of containerd, crio and " + "cri-dockerd under --host-run-dir."
    ).pipe(Flag.optional),
    hostRunDir: text("host-run-dir", "Where to look for the runtime socket.").pipe(Flag.withDefault("/var/run"))
  }),
  (flags) =>
    // The socket given, else the first of SPEC §3's that answers; none answering fails the start,
    // and the kubelet restarts the pod.
    runDaemonCommand(
      flags,
      CriLive.layer({
        socket: Option.getOrUndefined(flags.runtimeSocket),
        hostRunDir: flags.hostRunDir,
        hostRoot: flags.hostRoot
      })
    )
).pipe(
  Command.withDescription(
    "Run the daemon on one node: watch its NodeImage, pull each tag through the node's CRI runtime, " + "report status and progress."
  )
)
