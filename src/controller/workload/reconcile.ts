import { Data, Effect } from "effect"
import { escapeForeignText } from "../../api/goQuote.ts"
import type { LabelSelector } from "../../api/labelSelector.ts"
import { matchesLabelSelector } from "../../api/labelSelector.ts"
import { deleteExact } from "../../kube/deleteExact.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { Conflict, Forbidden, Unauthorized, Unavailable } from "../../kube/errors.ts"
import { keyOf } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"
import type { KeysBy, Store } from "../../kube/store.ts"
import type { Outcome, Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable, TerminalError } from "../../workqueue/ReconcileError.ts"
import { recordEvent } from "../../kube/events.ts"
import { controlledBy } from "../stores.ts"
import type { ControllerStores } from "../stores.ts"
import { parallelismKey } from "./annotations.ts"
import { createdEvent, decideWorkload } from "./decide.ts"
import { parseWorkloadKey } from "./keys.ts"
import type { WorkloadKind } from "./revisions.ts"
import { rolloutOf } from "./revisions.ts"
import type { WorkloadBooks } from "./state.ts"
import { specOf } from "./template.ts"

/** The stores pre-download reads: the workloads, what they own, and the pods they select. */
type WorkloadStores = Pick<
  ControllerStores,
  "deployments" | "statefulSets" | "daemonSets" | "replicaSets" | "controllerRevisions" | "pods" | "jobs"
>

const record = recordEvent("preheat-controller")

type DeleteError = Conflict | Forbidden | Unauthorized | Unavailable

/** A create that failed for another reason than an earlier self: the reconcile is retried with backoff (unless the server judged every such job invalid: then it is terminal). */
class PreDownloadCreateFailed extends Data.TaggedError("PreDownloadCreateFailed")<{ readonly jobs: ReadonlyArray<string> }> {
  override get message(): string {
    return `could not create ImagePullJob ${this.jobs.join(", ")}`
  }
}

export const workloadStore = (ctx: Pick<ControllerStores, "deployments" | "statefulSets" | "daemonSets">, kind: WorkloadKind): Store =>
  kind === "Deployment" ? ctx.deployments : kind === "StatefulSet" ? ctx.statefulSets : ctx.daemonSets

const ownedIn = <A>(store: Store<A, { readonly owner: KeysBy<A> }>, owner: KubeObject): Array<KubeObject> =>
  controlledBy(store, owner).map((stored) => stored.raw)

const selectedPods = (ctx: WorkloadStores, workload: KubeObject): Array<KubeObject> => {
  const selector = specOf(workload)["selector"] as LabelSelector | undefined
  // apps/v1 requires a non-empty selector; without one no pod is the workload's.
  if (selector === undefined) return []
  const namespace = workload.metadata.namespace
  const pods: Array<KubeObject> = []
  for (const pod of ctx.pods.values()) {
    if (pod.metadata.namespace === namespace && matchesLabelSelector(selector, pod.metadata.labels ?? {})) pods.push(pod)
  }
  return pods
}

/**
 * Pre-download for one Deployment, StatefulSet or DaemonSet: reads its revisions, pods and jobs
 * from the stores, decides (decide.ts), then deletes and creates ImagePullJobs and records events.
 */
export const reconcileWorkload = (ctx: WorkloadStores, books: WorkloadBooks): Reconcile<KubeApi> =>
  Effect.fn("reconcile Workload")(function* (
    key: string
  ): Effect.fn.Return<Outcome, PreDownloadCreateFailed | TerminalError | DeleteError, KubeApi> {
    const api = yield* KubeApi
    const { kind, name, namespace } = parseWorkloadKey(key)
    const workload = workloadStore(ctx, kind).get(keyOf(namespace, name))
    if (workload === undefined) {
      // Its jobs go with it through garbage collection (they carry its controller reference).
      books.settle(key, undefined)
      return {}
    }
    const uid = workload.metadata.uid ?? ""
    // Without the annotation only its jobs matter (to stop them): no need to read revisions and pods.
    const rollout =
      workload.metadata.annotations?.[parallelismKey] === undefined
        ? undefined
        : rolloutOf(kind, workload, {
            replicaSets: kind === "Deployment" ? ownedIn(ctx.replicaSets, workload) : [],
            revisions: kind === "Deployment" ? [] : ownedIn(ctx.controllerRevisions, workload),
            pods: selectedPods(ctx, workload)
          })
    const decision = decideWorkload({
      kind,
      workload,
      rollout,
      jobs: ownedIn(ctx.jobs, workload),
      settled: books.settled(key, uid)
    })
    const condemned = new Set(decision.delete)
    for (const job of ownedIn(ctx.jobs, workload)) {
      // Another failure fails the reconcile, which is retried with backoff before anything is recorded.
      if (condemned.has(job.metadata.name ?? "")) yield* deleteExact(resources.imagePullJob, job)
    }
    const failures: Array<string> = []
    // Whether every refusal was the server's judgement of the job itself (422).
    let allInvalid = true
    for (const job of decision.create) {
      const created = yield* api.create(resources.imagePullJob, job).pipe(
        Effect.catchTag("AlreadyExists", () => Effect.succeed(undefined)),
        Effect.catch((error) => {
          if (error._tag !== "Invalid") allInvalid = false
          return Effect.as(
            record(workload, {
              type: "Warning",
              reason: "FailedCreateImagePullJob",
              message: `failed to create ImagePullJob ${job.metadata.name}: ${escapeForeignText(error.message || error._tag)}`
            }),
            null
          )
        })
      )
      if (created === null) {
        failures.push(job.metadata.name ?? "")
        continue
      }
      if (created !== undefined) yield* ctx.jobs.written(created)
      yield* record(workload, createdEvent(job))
    }
    for (const event of decision.events) yield* record(workload, event)
    if (failures.length > 0) {
      const failed = new PreDownloadCreateFailed({ jobs: failures })
      // The workload's template builds the same job on every retry, so one the server rejected as
      // invalid stays rejected until the workload is edited, and an edit wakes the key anyway: not
      // retried (the event says why), where a refusal that may pass later (quota, RBAC, the server away) is.
      return yield* Effect.fail(allInvalid ? new TerminalError({ cause: failed }) : failed)
    }
    books.settle(key, decision.settled === undefined ? undefined : { uid, settled: decision.settled })
    return {}
  }, Effect.mapError(retryable))
