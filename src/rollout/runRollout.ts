import { Console, Duration, Effect, Option, Random } from "effect"
import type { Parallelism } from "../api/jobTemplate.ts"
import { formatLabelSelector } from "../api/labelSelector.ts"
import { KubeApi } from "../kube/KubeApi.ts"
import { resources } from "../kube/resources.ts"
import { buildModel, statusNodeImage } from "../statusView/buildModel.ts"
import { runStatus } from "../statusView/runStatus.ts"
import type { Screen } from "../statusView/screen.ts"
import { PrePullFailed, WorkloadNotFound } from "./errors.ts"
import { imageChanges, newImages, setImagePatch } from "./imageChanges.ts"
import type { ImageSetting } from "./imageSettings.ts"
import { failureLines, judge, unfinished } from "./outcome.ts"
import type { JobFailure, RolloutJob } from "./outcome.ts"
import { readTemplate } from "./podTemplate.ts"
import { jobTtlSeconds, podNodes, rolloutJobs, rolloutLabel } from "./rolloutJobs.ts"
import { StrategicPatch } from "../kube/StrategicPatch.ts"
import type { WorkloadRef } from "./workloadArgument.ts"
import { displayName } from "./workloadArgument.ts"

export interface RolloutOptions {
  readonly workload: WorkloadRef
  readonly namespace: string
  readonly settings: ReadonlyArray<ImageSetting>
  readonly parallelism: Parallelism
  /** Undefined: wait as long as the jobs take. */
  readonly timeout: Duration.Duration | undefined
  readonly screen: Screen
}

/**
 * The jobs' own deadline (activeDeadlineSeconds) is --timeout; the controller then fails the
 * nodes still pulling, with a message each. Past this much longer the command stops waiting for
 * a controller that does not report, and lists what it sees.
 */
const reportGrace = Duration.seconds(10)

const randomId = Effect.map(Random.nextIntBetween(0, 2_147_483_647), (n) => n.toString(36).padStart(6, "0"))

const names = (jobs: ReadonlyArray<RolloutJob>) => jobs.map((j) => j.name).join(", ")

/**
 * `preheat rollout`: pre-pulls the images a `kubectl set image` would bring onto the nodes of the
 * workload's pods, shows the progress, and patches the workload only once every node has them.
 * On a failure or timeout the workload stays as it was and the jobs stay for inspection; when
 * interrupted (Ctrl-C, SIGTERM) the jobs are deleted and the workload stays as it was.
 */
export const runRollout = Effect.fn("runRollout")(function* (options: RolloutOptions) {
  const api = yield* KubeApi
  const { kind, name } = options.workload
  const namespace = options.namespace
  const display = displayName(options.workload)

  const workload = yield* api
    .get(kind.resource, { namespace, name })
    .pipe(Effect.catchTag("NotFound", () => Effect.fail(new WorkloadNotFound({ plural: kind.resource.plural, name, namespace }))))
  const template = yield* Effect.fromResult(readTemplate(workload, display))
  const changes = yield* Effect.fromResult(imageChanges(template, options.settings))
  // As kubectl set image: nothing to change, nothing to say.
  if (changes.length === 0) return

  const setImages = Effect.gen(function* () {
    const patcher = yield* StrategicPatch
    yield* patcher.patch(kind.resource, { namespace, name }, setImagePatch(template, changes))
    yield* Console.log(`${display} image updated`)
  }).pipe(Effect.uninterruptible)

  const images = newImages(template, changes)
  const pods = yield* api.list(resources.pod, { namespace, labelSelector: formatLabelSelector(template.selector) })
  const nodes = podNodes(pods.items)
  if (images.length === 0 || nodes.length === 0) {
    // A workload scaled to zero, or one whose pods are not placed yet: new pods will land on
    // nodes nobody can name now, so there is nothing to pre-pull and nothing to wait for.
    yield* Console.error(
      images.length === 0
        ? `no image is new to ${display}: nothing to pre-pull`
        : `no pod of ${display} runs on a node: nothing to pre-pull`
    )
    return yield* setImages
  }

  const rolloutId = yield* randomId
  const specs = rolloutJobs({
    workload: options.workload,
    namespace,
    template,
    images,
    nodes,
    rolloutId,
    parallelism: options.parallelism,
    timeout: options.timeout
  })
  const created: Array<RolloutJob> = []
  const kept =
    `the ImagePullJobs stay for inspection until ${Duration.format(Duration.seconds(jobTtlSeconds))} after they ` +
    `finished: kubectl get imagepulljobs -n ${namespace} -l ${rolloutLabel}=${rolloutId}`

  const failed = (headline: string, failures: ReadonlyArray<JobFailure>) =>
    Effect.fail(new PrePullFailed({ message: [headline, ...failureLines(failures), kept].join("\n") }))

  const prePull = Effect.gen(function* () {
    for (const [i, spec] of specs.entries()) {
      // Uninterruptible, so that a job the server created is always in `created` for the clean-up.
      const job = yield* api.create(resources.imagePullJob, spec).pipe(Effect.uninterruptible)
      created.push({ name: job.metadata.name ?? "", image: images[i]?.image ?? "" })
    }
    yield* Console.error(
      `pre-pulling on ${nodes.length} node${nodes.length === 1 ? "" : "s"} before updating ${display}: ` +
        `ImagePullJob ${names(created)} in namespace ${namespace}`
    )
    const view = runStatus({
      namespace,
      watch: true,
      screen: options.screen,
      labelSelector: `${rolloutLabel}=${rolloutId}`,
      until: (model) => judge(model, created)._tag !== "Pulling"
    }).pipe(Effect.scoped)
    const finished =
      options.timeout === undefined
        ? Option.some(yield* view)
        : yield* Effect.timeoutOption(view, Duration.sum(options.timeout, reportGrace))
    if (Option.isSome(finished)) {
      const outcome = judge(finished.value, created)
      if (outcome._tag === "Failed") return yield* failed(`pre-pull for ${display} failed; ${display} is unchanged`, outcome.failures)
      return
    }
    const model = yield* currentModel(namespace, rolloutId)
    return yield* failed(
      `pre-pull for ${display} did not finish within ${Duration.format(options.timeout!)}; ${display} is unchanged`,
      unfinished(model, created)
    )
  }).pipe(Effect.onInterrupt(() => cleanUp(namespace, created, display)))

  yield* prePull
  yield* setImages
})

/** The view's model from one list of the rollout's jobs and the NodeImages, for the timeout report. */
const currentModel = (namespace: string, rolloutId: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const jobs = yield* api.list(resources.imagePullJob, { namespace, labelSelector: `${rolloutLabel}=${rolloutId}` })
    const nodeImages = yield* api.list(resources.nodeImage)
    return buildModel({ namespace, imagePullJobs: jobs.items, imageListPullJobs: [], nodeImages: nodeImages.items.map(statusNodeImage) })
  })

/** Ctrl-C or SIGTERM while pre-pulling: the jobs go (their NodeImage tasks with them), the workload stays. */
const cleanUp = (namespace: string, created: ReadonlyArray<RolloutJob>, display: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const left: Array<string> = []
    for (const job of created) {
      yield* api.delete(resources.imagePullJob, { namespace, name: job.name }).pipe(
        Effect.catchTag("NotFound", () => Effect.void),
        Effect.catch((error) => Effect.sync(() => left.push(`${job.name} (${error.message})`)))
      )
    }
    const deleted = created.length === 0 ? "" : ` deleted ImagePullJob ${names(created)};`
    yield* Console.error(`interrupted:${deleted} ${display} is unchanged`)
    if (left.length > 0) yield* Console.error(`could not delete ImagePullJob ${left.join(", ")}`)
  })
