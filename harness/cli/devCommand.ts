import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  bytesFlag,
  credentialProviderBinDirFlag,
  credentialProviderConfigFlag,
  eraserExclusionNamespaceFlag,
  minFreeDiskFlag,
  nodeStatusMaxImagesFlag,
  portNumber,
  pullProgressTimeoutFlag
} from "../../src/cli/flags.ts"
import { harnessDescriptions } from "../../src/cli/harnessListing.ts"

const flags = {
  nodes: Flag.Int("nodes").pipe(Flag.withDescription("Simulated nodes (default 3)."), Flag.withDefault(3)),
  host: Flag.String("host").pipe(Flag.withDescription("Address of the API server (default 127.0.0.1)."), Flag.withDefault("127.0.0.1")),
  port: Flag.Int("port").pipe(
    Flag.withDescription("Port of the API server; 0 picks a free one (default 0)."),
    Flag.withDefault(0),
    portNumber()
  ),
  metricsPort: Flag.Int("metrics-port").pipe(
    Flag.withDescription(
      "Port of /healthz, /readyz and /metrics on --host (the controller's and the daemons' metrics, and with --p2p the " +
        "simulated registry's counters); 0 picks a free one; default: not served."
    ),
    portNumber(),
    Flag.optional
  ),
  kubeconfigOut: Flag.String("kubeconfig").pipe(
    Flag.withDescription("Where to write the kubeconfig for kubectl (default: preheat-dev.kubeconfig in the temp dir)."),
    Flag.withDefault(join(tmpdir(), "preheat-dev.kubeconfig"))
  ),
  runtimeSocket: Flag.String("runtime-socket").pipe(
    Flag.withDescription("A real CRI socket: node-1 then pulls for real; the other nodes stay simulated."),
    Flag.optional
  ),
  minFreeDisk: minFreeDiskFlag,
  pullProgressTimeout: pullProgressTimeoutFlag,
  credentialProviderConfig: credentialProviderConfigFlag,
  credentialProviderBinDir: credentialProviderBinDirFlag,
  p2p: Flag.Boolean("p2p").pipe(
    Flag.withDescription(
      "Peer-to-peer mode: the nodes share a registry mirror, as Spegel does: each layer comes from a node that holds it " +
        "whole, at the peers' speed (250 MB/s), else from the registry (50 MB/s); the registry's bytes are counted " +
        "(ConfigMap simulated-registry-served, a line per image, and counters on --metrics-port)."
    ),
    Flag.withDefault(false)
  ),
  nodeDisk: bytesFlag(
    "node-disk",
    "Size of each simulated node's image disk, which pulled images fill (simulated nodes have no image GC)",
    "1Ti"
  ),
  // The controller's; dev creates the namespace, as installing eraser would.
  eraserExclusionNamespace: eraserExclusionNamespaceFlag,
  // The simulated kubelets' cap on the images they list in their nodes' status, and the daemons'.
  nodeStatusMaxImages: nodeStatusMaxImagesFlag
}

export type DevFlags = Command.Command.Config.Infer<typeof flags>

/** `preheat dev`'s flags and help; what it runs (runDev.ts: the API server, controller, daemons) is loaded when it runs. */
export const devCommand = Command.make("dev", flags, (input) =>
  Effect.flatMap(
    Effect.promise(() => import("./runDev.ts")),
    ({ runDev }) => runDev(input)
  )
).pipe(Command.withDescription(harnessDescriptions.dev))
