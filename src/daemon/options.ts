import { Duration } from "effect"
import type { KubeletConfigPaths } from "./kubeletConfig/read.ts"
import { defaultMinFreeDisk, type MinFreeDisk } from "./minFreeDisk.ts"
import { type RenewalPace, renewalPace } from "./providerRenewal/decide.ts"
import { defaultPullProgressTimeoutMillis } from "./stallClock.ts"
import { defaultUnreportedGraceMs } from "./unreportedTags.ts"
import { kubeletDefaultMaxImages } from "../api/nodeStatusImages.ts"

/** What `preheat daemon` needs to run on one node (SPEC §3). */
export interface DaemonOptions {
  /** The node this daemon pulls for: its NodeImage has the same name (NODE_NAME in the DaemonSet). */
  readonly nodeName: string
  /** The only namespace whose Secrets the daemon reads: the controller's copies of pull secrets live there. */
  readonly secretNamespace: string
  /** `--max-concurrent-pulls`: pulls running at once on this node; further tags report Waiting. */
  readonly maxConcurrentPulls: number
  /** `--min-free-disk`: a pull starts only with this much free on the runtime's image filesystem. */
  readonly minFreeDisk: MinFreeDisk
  /**
   * `--pull-progress-timeout`: an attempt whose bytes have not moved this long, while the runtime
   * shows it awaits some, fails with PullStalled (stallClock.ts); zero turns it off.
   */
  readonly pullProgressTimeout: Duration.Input
  /** The ops endpoint (/healthz, /readyz, /metrics); 0 picks a free port. */
  readonly metricsPort: number
  readonly metricsHost: string
  /** Status writes that carry only progress go out at most this often; phase changes go at once. */
  readonly progressWriteInterval: Duration.Input
  /** A pull's Pulling is written this long after it starts, with its outcome if it ended by then. */
  readonly pullingWriteDelay: Duration.Input
  /**
   * A pull's outcome waits for the node's other pulls still running this long at most, to go out
   * in one write with theirs: the tasks of jobs that arrived together finish close together.
   */
  readonly outcomeWriteDelay: Duration.Input
  /** The name Events are reported under. */
  readonly component: string
  /** `--pin-images`: keep containerd's pin label on images Never jobs want here (src/daemon/pins/). */
  readonly pinImages: boolean
  /** How often pins are checked again without a NodeImage change (a job deleted or edited meanwhile). */
  readonly pinResyncInterval: Duration.Input
  /**
   * `--kubelet-config` (and `--kubelet-config-dir`): where to read the node's image verification
   * policy (kubeletConfig/); undefined, it is not read (simulated nodes) and the status keeps what it says.
   */
  readonly kubeletConfig?: KubeletConfigPaths | undefined
  /** How often the credential providers of a tag refused on their credentials are asked again (providerRenewal/); no flag. */
  readonly providerRenewalPace: RenewalPace
  /**
   * `--node-status-max-images`: the kubelet's nodeStatusMaxImages. A Node listing this many images
   * may leave smaller ones out, and the Succeeded tags whose image it leaves out are marked
   * `unreported` (unreportedTags.ts); -1 (no limit) or 0 (no list): none.
   */
  readonly nodeStatusMaxImages: number
  /** `--unreported-grace`: how long after a pull succeeded the node's kubelet is given to list the image before the tag is marked. */
  readonly unreportedGrace: Duration.Input
}

/** The kubelet's configuration file where kubeadm puts it (`kubelet --config`). */
export const defaultKubeletConfig = "/var/lib/kubelet/config.yaml"

export const defaultSecretNamespace = "preheat-daemon-config"
const defaultMaxConcurrentPulls = 2
export const defaultMetricsPort = 10221

export const defaultDaemonOptions: Omit<DaemonOptions, "nodeName"> = {
  secretNamespace: defaultSecretNamespace,
  maxConcurrentPulls: defaultMaxConcurrentPulls,
  minFreeDisk: defaultMinFreeDisk,
  pullProgressTimeout: Duration.millis(defaultPullProgressTimeoutMillis),
  metricsPort: defaultMetricsPort,
  metricsHost: "0.0.0.0",
  // Upstream's daemon writes its NodeImage status at 0.5 a second sustained (statusUpdateQPS); a
  // progress write per node per second would be 5,000 writes a second for a 5,000-node rollout.
  progressWriteInterval: Duration.seconds(2),
  // A pull that ends within 2 s writes one status version, its outcome, instead of two (Pulling,
  // then the outcome); a longer pull shows Pulling 2 s in, as its first progress write would.
  pullingWriteDelay: Duration.seconds(2),
  // Tags given together (one write of the controller's) finish within about a second of each other
  // when their images are alike; one write for all of them instead of one each, and a job whose
  // pull was quicker learns of it at most this much later.
  outcomeWriteDelay: Duration.seconds(1),
  component: "preheat-daemon",
  pinImages: false,
  pinResyncInterval: Duration.minutes(10),
  providerRenewalPace: renewalPace,
  nodeStatusMaxImages: kubeletDefaultMaxImages,
  unreportedGrace: Duration.millis(defaultUnreportedGraceMs)
}

/** Defaults for everything but the node name. */
export const daemonOptions = (options: Pick<DaemonOptions, "nodeName"> & Partial<DaemonOptions>): DaemonOptions => ({
  ...defaultDaemonOptions,
  ...options
})
