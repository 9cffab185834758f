import { Command } from "effect/cli"

/**
 * What `preheat --help` says of the harness's commands. The product's tree lists them but does not
 * carry them (treeFor.ts sends their command lines to harness/main.ts); the commands themselves
 * (harness/cli/) take their descriptions from here, so the listing cannot drift from them.
 */
export const harnessDescriptions = {
  apiserver:
    "Run a throwaway in-memory Kubernetes API server for Namespace, Node, Pod, Secret, Event, Lease and the " +
    "ImagePullJob, ImageListPullJob, NodeImage and AdvancedCronJob CRDs, over plain http (kubectl and client-node work against it); with --workloads, also " +
    "schedules the apps/v1 workloads' pods.",
  dev:
    "Run a local cluster in one process: an API server, the controller and simulated nodes with daemons; " +
    "kubectl works against it at once.",
  fleet:
    "Run N simulated nodes in one process: each registered as a Ready Node and running the daemon on the simulated " +
    "runtime with its own NodeImage watch, for scale tests against a real API server and controller.",
  "simulated-daemon":
    "Run the daemon of one node as `preheat daemon` does, with its flags, but pulling on a simulated runtime (every image " +
    "exists, ~50 MB/s) instead of the node's CRI runtime; registers no Node: for tests and clusters of separate processes."
} as const

/**
 * The harness's commands as the product's `preheat --help` lists them: a name and a description,
 * no flags and no handler; a command line naming one of them never reaches this tree.
 */
export const harnessListing = [
  Command.make("apiserver").pipe(Command.withDescription(harnessDescriptions.apiserver)),
  Command.make("dev").pipe(Command.withDescription(harnessDescriptions.dev)),
  Command.make("fleet").pipe(Command.withDescription(harnessDescriptions.fleet)),
  Command.make("simulated-daemon").pipe(Command.withDescription(harnessDescriptions["simulated-daemon"]))
] as const
