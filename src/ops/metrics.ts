import { Context, Effect, Layer } from "effect"
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"
import type { CriError } from "../cri/errors.ts"
import { type NodeVerificationPolicy, nodeVerificationPolicies } from "../api/kubeletImageVerification.ts"

export type ReconcileResult = "success" | "error" | "requeue"
export type ApiVerb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete"
/** The outcome of an API call, named like the HTTP status it stands for. */
export type ApiResult =
  | "ok"
  | "not_found"
  | "conflict"
  | "invalid"
  | "unauthorized"
  | "forbidden"
  | "unavailable"
  | "gone"
  | "already_exists"
export type JobPhase = "running" | "completed" | "paused" | "invalid"
export type PullWorkerState = "active" | "waiting"
/** How a node's warming ended (src/controller/nodeWarming/decide.ts WarmOutcome). */
export type WarmOutcome = "warmed" | "timeout" | "failed"

/**
 * How one tag's pull ended (after its retries). A closed vocabulary keeps the label's
 * cardinality bounded: image names never become label values.
 */
export type PullOutcome =
  | { readonly result: "succeeded"; readonly reason: "pulled" | "present" }
  | {
      readonly result: "failed"
      readonly reason:
        | "runtime_unavailable"
        | "timeout"
        | "deadline"
        | "not_found"
        | "unauthorized"
        // The registry still throttled (HTTP 429) when the throttled retries ran out.
        | "throttled"
        | "invalid_reference"
        | "runtime_error"
        // The tag does not decode (src/daemon/unreadableTag.ts): failed without a pull.
        | "invalid_spec"
        // Less free room on the image filesystem than --min-free-disk (src/daemon/minFreeDisk.ts): not pulled.
        | "insufficient_disk"
        // The bytes stopped for --pull-progress-timeout while the runtime awaited some (src/daemon/stallClock.ts).
        | "stalled"
    }

/** How one run of a credential provider's plugin ended (src/cri/credentialProvider/CredentialProviders.ts). */
export type ProviderRunResult = "succeeded" | "failed" | "not_found" | "timeout" | "invalid_response"

/** An image filesystem's size and room, as the daemon last read them. */
export interface ImageFsFigures {
  readonly mountpoint: string
  readonly totalBytes: number
  readonly freeBytes: number
}

export interface Exposition {
  readonly contentType: string
  readonly body: string
}

/** What ends a pull attempt: the runtime's errors, the daemon's own refusal for want of disk, and its stall clock. */
export type PullFailureTag = CriError["_tag"] | "InsufficientDisk" | "PullStalled"

const pullReasonOfTag: Record<PullFailureTag, Extract<PullOutcome, { result: "failed" }>["reason"]> = {
  RuntimeUnavailable: "runtime_unavailable",
  DeadlineExceeded: "timeout",
  ImageNotFound: "not_found",
  Unauthorized: "unauthorized",
  RegistryThrottled: "throttled",
  InvalidReference: "invalid_reference",
  RuntimeFailure: "runtime_error",
  InsufficientDisk: "insufficient_disk",
  PullStalled: "stalled"
}

/** The pulls_total outcome for a pull whose last attempt failed with this error. */
export const pullFailureOf = (error: { readonly _tag: PullFailureTag }): PullOutcome => ({
  result: "failed",
  reason: pullReasonOfTag[error._tag]
})

/**
 * Prometheus metrics of both roles. Each layer build owns a fresh prom-client Registry (never the
 * global default one), so tests and two roles in one process do not see each other's samples.
 * Helpers are typed so label names and values cannot drift between the code and dashboards.
 */
export class Metrics extends Context.Service<
  Metrics,
  {
    readonly registry: Registry
    /** One finished reconcile: counts it by result (errors also in reconcile_errors_total) and times it. */
    readonly recordReconcile: (controller: string, result: ReconcileResult, seconds: number) => Effect.Effect<void>
    readonly setWorkqueueDepth: (name: string, depth: number) => Effect.Effect<void>
    /** Time a key spent due in the queue before a worker took it. */
    readonly observeWorkqueueWait: (name: string, seconds: number) => Effect.Effect<void>
    readonly countApiRequest: (verb: ApiVerb, kind: string, result: ApiResult) => Effect.Effect<void>
    /** All phases at once, so a phase that emptied drops to 0 instead of keeping a stale value. */
    readonly setJobs: (counts: Readonly<Record<JobPhase, number>>) => Effect.Effect<void>
    readonly setNodesPulling: (count: number) => Effect.Effect<void>
    /** ImagePullJobs whose condition DigestMismatch is True now. */
    readonly setJobsWithDigestMismatch: (count: number) => Effect.Effect<void>
    readonly setLeader: (isLeader: boolean) => Effect.Effect<void>
    /** Nodes held by the startup taint now. */
    readonly setNodesWarming: (count: number) => Effect.Effect<void>
    /** Every registry's concurrent-pull limit at once, so a registry whose limit went away drops out. */
    readonly setRegistryPullLimits: (limits: ReadonlyMap<string, number>) => Effect.Effect<void>
    /** A node's startup taint removed: how it ended and how long after the taint was first seen. */
    readonly recordNodeWarm: (outcome: WarmOutcome, seconds: number) => Effect.Effect<void>
    /** One tag's pull finished (after retries), with its wall-clock duration. */
    readonly recordPull: (outcome: PullOutcome, seconds: number) => Effect.Effect<void>
    readonly addPulledBytes: (bytes: number) => Effect.Effect<void>
    readonly setPullWorkers: (counts: Readonly<Record<PullWorkerState, number>>) => Effect.Effect<void>
    /** One run of a credential provider's plugin (src/cri/credentialProvider/), by how it ended. */
    readonly recordCredentialProviderRun: (provider: string, result: ProviderRunResult) => Effect.Effect<void>
    /** The node's imagePullCredentialsVerificationPolicy as its kubelet configuration says: 1 for it, 0 for the others. */
    readonly setImageVerificationPolicy: (policy: NodeVerificationPolicy) => Effect.Effect<void>
    /** Images this node's succeeded tags hold that its Node's status.images does not list (the kubelet's nodeStatusMaxImages). */
    readonly setNodeImagesUnreported: (count: number) => Effect.Effect<void>
    /** The image filesystems as just read; none when their room cannot be told (image_fs_unknown 1). */
    readonly setImageFs: (filesystems: ReadonlyArray<ImageFsFigures>) => Effect.Effect<void>
    /**
     * The sum of a family's samples whose labels include `labels` (for a histogram: the number of
     * observations). For tests and benchmarks, which read the metric itself instead of a shadow counter.
     */
    readonly read: (name: string, labels?: Readonly<Record<string, string>>) => Effect.Effect<number>
    /** The text exposition of every family in this registry, for GET /metrics. */
    readonly render: Effect.Effect<Exposition>
  }
>()("preheat/ops/Metrics") {
  /** For the running process: the families below plus process_* and nodejs_* default metrics. */
  static readonly layer = Layer.sync(Metrics, () => makeMetrics({ processMetrics: true }))
  /**
   * In memory and deterministic: the same families without the default collectors (which start
   * event-loop and GC observers that live as long as the process).
   */
  static readonly layerTest = Layer.sync(Metrics, () => makeMetrics({ processMetrics: false }))
}

// Reconciles are mostly pure computation plus a few API writes: milliseconds to tens of seconds.
const reconcileBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
// Keys can wait behind a busy queue or a rate limiter for minutes.
const waitBuckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300]
// A cached image answers in 0.1 s; a multi-GB image over a slow link takes up to the 30 min cap.
const pullBuckets = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800]
// A node is held from seconds (its images already cached) to the warm timeout (10 min by default).
const warmBuckets = [1, 2.5, 5, 10, 20, 30, 60, 120, 180, 300, 450, 600, 900, 1800]
const warmOutcomes: ReadonlyArray<WarmOutcome> = ["warmed", "timeout", "failed"]

const jobPhases: ReadonlyArray<JobPhase> = ["running", "completed", "paused", "invalid"]
const workerStates: ReadonlyArray<PullWorkerState> = ["active", "waiting"]

export const makeMetrics = (options: { readonly processMetrics: boolean }): Metrics["Service"] => {
  const registry = new Registry()
  const registers = [registry]
  // Sampling the event loop every 100 ms instead of 10 ms: the default cost an idle daemon 7 ms of CPU a second.
  if (options.processMetrics) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 })

  const reconciles = new Counter({
    name: "preheat_reconciles_total",
    help: "Reconciles by controller and result (success, error, requeue).",
    labelNames: ["controller", "result"] as const,
    registers
  })
  const reconcileErrors = new Counter({
    name: "preheat_reconcile_errors_total",
    help: "Reconciles that ended in an error, by controller.",
    labelNames: ["controller"] as const,
    registers
  })
  const reconcileDuration = new Histogram({
    name: "preheat_reconcile_duration_seconds",
    help: "Time spent in one reconcile, by controller.",
    labelNames: ["controller"] as const,
    buckets: reconcileBuckets,
    registers
  })
  const workqueueDepth = new Gauge({
    name: "preheat_workqueue_depth",
    help: "Keys waiting in a work queue, by queue name.",
    labelNames: ["name"] as const,
    registers
  })
  const workqueueWait = new Histogram({
    name: "preheat_workqueue_wait_seconds",
    help: "Time a key was due in the queue before a worker took it, by queue name.",
    labelNames: ["name"] as const,
    buckets: waitBuckets,
    registers
  })
  const apiRequests = new Counter({
    name: "preheat_api_requests_total",
    help: "Kubernetes API calls by verb, kind (kind/status for the status subresource) and result.",
    labelNames: ["verb", "kind", "result"] as const,
    registers
  })
  const jobs = new Gauge({
    name: "preheat_jobs",
    help: "ImagePullJobs by phase (running, completed, paused, invalid).",
    labelNames: ["phase"] as const,
    registers
  })
  const digestMismatches = new Gauge({
    name: "preheat_jobs_digest_mismatch",
    help: "ImagePullJobs whose nodes resolved the image to more than one digest (condition DigestMismatch True: the tag moved during the job).",
    registers
  })
  const nodesPulling = new Gauge({
    name: "preheat_nodes_pulling",
    help: "Nodes with at least one tag pulling.",
    registers
  })
  const nodesWarming = new Gauge({
    name: "preheat_nodes_warming",
    help: "Nodes held by preheat's startup taint until the jobs that must warm them succeeded there.",
    registers
  })
  const registryPullLimit = new Gauge({
    name: "preheat_registry_pull_limit",
    help: "Concurrent pulls allowed per registry host: --max-concurrent-pulls-per-registry, or lower while the registry throttles (AIMD).",
    labelNames: ["registry"] as const,
    registers
  })
  const nodeWarm = new Histogram({
    name: "preheat_node_warm_seconds",
    help: "Time from a node's startup taint first seen to its removal, by outcome (warmed, timeout, failed).",
    labelNames: ["outcome"] as const,
    buckets: warmBuckets,
    registers
  })
  const leader = new Gauge({
    name: "preheat_leader",
    help: "1 while this controller replica holds the leader lease, else 0.",
    registers
  })
  const pulls = new Counter({
    name: "preheat_pulls_total",
    help: "Finished tag pulls on this node by result and reason.",
    labelNames: ["result", "reason"] as const,
    registers
  })
  const pullDuration = new Histogram({
    name: "preheat_pull_duration_seconds",
    help: "Wall-clock time of a finished tag pull, retries included.",
    buckets: pullBuckets,
    registers
  })
  const pulledBytes = new Counter({
    name: "preheat_pulled_bytes_total",
    help: "Image bytes pulled on this node, where the runtime reports them.",
    registers
  })
  const pullWorkers = new Gauge({
    name: "preheat_pull_workers",
    help: "Pull workers on this node by state (active, waiting for a slot).",
    labelNames: ["state"] as const,
    registers
  })

  // The providers come from the daemon's config file, so the label's values are few and known.
  const providerRuns = new Counter({
    name: "preheat_credential_provider_runs_total",
    help: "Runs of image credential provider plugins on this node by provider and result (succeeded, failed, not_found, timeout, invalid_response).",
    labelNames: ["provider", "result"] as const,
    registers
  })

  // By mountpoint, so that no series exists before a figure does: a 0 would read as a full disk.
  const imageFsFree = new Gauge({
    name: "preheat_image_fs_free_bytes",
    help: "Free bytes of the container runtime's image filesystem on this node (statfs of the mountpoint CRI reports), as read at start and before each pull attempt.",
    labelNames: ["mountpoint"] as const,
    registers
  })
  const imageFsCapacity = new Gauge({
    name: "preheat_image_fs_capacity_bytes",
    help: "Size in bytes of the container runtime's image filesystem on this node.",
    labelNames: ["mountpoint"] as const,
    registers
  })
  const imageFsUnknown = new Gauge({
    name: "preheat_image_fs_unknown",
    help: "1 when the daemon could not tell the image filesystem's free space at its last look (pulls then go on without the --min-free-disk check), else 0.",
    registers
  })

  const nodeImagesUnreported = new Gauge({
    name: "preheat_node_images_unreported",
    help: "Images this node's succeeded tags hold that its Node's status.images does not list (the kubelet lists its nodeStatusMaxImages largest, 50 by default), so that the scheduler's ImageLocality plugin does not count them; 0 while the node lists no image at all.",
    registers
  })

  // No series before the daemon read the kubelet's configuration (the controller never does).
  const imageVerificationPolicy = new Gauge({
    name: "preheat_node_image_verification_policy",
    help: "1 for this node's kubelet imagePullCredentialsVerificationPolicy (KEP-2535) as its configuration file says, 0 for the others: NeverVerify, NeverVerifyPreloadedImages, NeverVerifyAllowlistedImages, AlwaysVerify, Disabled (feature gate KubeletEnsureSecretPulledImages off), Unknown (no readable configuration).",
    labelNames: ["policy"] as const,
    registers
  })

  // Series with a known label set start at 0, so a scrape shows them before the first change.
  for (const phase of jobPhases) jobs.set({ phase }, 0)
  for (const state of workerStates) pullWorkers.set({ state }, 0)
  nodesPulling.set(0)
  nodesWarming.set(0)
  for (const outcome of warmOutcomes) nodeWarm.zero({ outcome })
  leader.set(0)

  const read = (name: string, labels: Readonly<Record<string, string>> = {}) =>
    Effect.promise(async () => {
      const metric = registry.getSingleMetric(name)
      if (metric === undefined) return 0
      const { values } = await metric.get()
      const sampleName = metric instanceof Histogram ? `${name}_count` : name
      let sum = 0
      for (const sample of values) {
        const ownName = (sample as { readonly metricName?: string }).metricName ?? name
        if (ownName !== sampleName) continue
        if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) sum += sample.value
      }
      return sum
    })

  return Metrics.of({
    registry,
    recordReconcile: (controller, result, seconds) =>
      Effect.sync(() => {
        reconciles.inc({ controller, result })
        if (result === "error") reconcileErrors.inc({ controller })
        reconcileDuration.observe({ controller }, seconds)
      }),
    setWorkqueueDepth: (name, depth) => Effect.sync(() => workqueueDepth.set({ name }, depth)),
    observeWorkqueueWait: (name, seconds) => Effect.sync(() => workqueueWait.observe({ name }, seconds)),
    countApiRequest: (verb, kind, result) => Effect.sync(() => apiRequests.inc({ verb, kind, result })),
    setJobs: (counts) =>
      Effect.sync(() => {
        for (const phase of jobPhases) jobs.set({ phase }, counts[phase])
      }),
    setNodesPulling: (count) => Effect.sync(() => nodesPulling.set(count)),
    setJobsWithDigestMismatch: (count) => Effect.sync(() => digestMismatches.set(count)),
    setLeader: (isLeader) => Effect.sync(() => leader.set(isLeader ? 1 : 0)),
    setNodesWarming: (count) => Effect.sync(() => nodesWarming.set(count)),
    setRegistryPullLimits: (limits) =>
      Effect.sync(() => {
        registryPullLimit.reset()
        for (const [registry, limit] of limits) registryPullLimit.set({ registry }, limit)
      }),
    recordNodeWarm: (outcome, seconds) => Effect.sync(() => nodeWarm.observe({ outcome }, seconds)),
    recordPull: (outcome, seconds) =>
      Effect.sync(() => {
        pulls.inc({ result: outcome.result, reason: outcome.reason })
        pullDuration.observe(seconds)
      }),
    // prom-client throws on a negative increment; a runtime reporting nothing (or garbage) adds nothing.
    addPulledBytes: (bytes) => Effect.sync(() => (bytes > 0 ? pulledBytes.inc(bytes) : undefined)),
    setPullWorkers: (counts) =>
      Effect.sync(() => {
        for (const state of workerStates) pullWorkers.set({ state }, counts[state])
      }),
    recordCredentialProviderRun: (provider, result) => Effect.sync(() => providerRuns.inc({ provider, result })),
    setImageVerificationPolicy: (current) =>
      Effect.sync(() => {
        for (const policy of nodeVerificationPolicies) imageVerificationPolicy.set({ policy }, policy === current ? 1 : 0)
      }),
    setNodeImagesUnreported: (count) => Effect.sync(() => nodeImagesUnreported.set(count)),
    setImageFs: (filesystems) =>
      Effect.sync(() => {
        imageFsFree.reset()
        imageFsCapacity.reset()
        for (const fs of filesystems) {
          imageFsFree.set({ mountpoint: fs.mountpoint }, fs.freeBytes)
          imageFsCapacity.set({ mountpoint: fs.mountpoint }, fs.totalBytes)
        }
        imageFsUnknown.set(filesystems.length === 0 ? 1 : 0)
      }),
    read,
    render: Effect.promise(async () => ({ contentType: registry.contentType, body: await registry.metrics() }))
  })
}
