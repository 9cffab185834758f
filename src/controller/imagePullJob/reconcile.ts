import { type Cause, Clock, Duration, Effect, Exit, Predicate, Result } from "effect"
import type { ImagePullJob, ImagePullJobStatus } from "../../api/imagePullJob.ts"
import { parseImageReference, toNodeImageTask } from "../../api/imageReference.ts"
import type { NodeImage, ReferenceObject } from "../../api/nodeImage.ts"
import { preferredApiVersion } from "../../api/references.ts"
import { decodeImagePullJob } from "../../api/decode.ts"
import { effectiveImagePullPolicy } from "../../api/pullPolicySpelling.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject, WriteError } from "../../kube/KubeApi.ts"
import type { Invalid } from "../../kube/errors.ts"
import { keyOf, objectKey, splitKey } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"
import { asideFromWorker } from "../../workqueue/runWorkers.ts"
import type { Reconcile } from "../../workqueue/runWorkers.ts"
import { retryable } from "../../workqueue/ReconcileError.ts"
import type { WorkQueue } from "../../workqueue/Scheduler.ts"
import type { ControllerSettings } from "../settings.ts"
import type { SourceSecretBook } from "../pullSecrets/sourceSecrets.ts"
import type { ControllerStores } from "../stores.ts"
import { recordEvent } from "../../kube/events.ts"
import type { InvalidPullSecret } from "../../cri/dockerConfig.ts"
import { copyReference, secretProblem } from "../pullSecrets/copies.ts"
import { heldFinalizers, releasedFinalizers } from "./finalizers.ts"
import { patchStatus, reportInvalid } from "../writes.ts"
import { type CredentialRetry, credentialsOf, renewed, retriesDue, retriesOf } from "./credentialRenewal.ts"
import { decideFromTally } from "./decide.ts"
import type { NodeWrite, TargetTally } from "./decide.ts"
import type { JobTask } from "./nodeTask.ts"
import { withoutOwner } from "./nodeTask.ts"
import { JobProgress } from "./progress.ts"
import { loweredMessage, registryOf } from "./registryRoom.ts"
import type { LimitLowered } from "./registryBudget.ts"
import { registryThrottledReason } from "../../api/registryThrottle.ts"
import { deprecatedFieldEvents } from "../status/deprecatedFields.ts"
import type { ImagePullJobBooks } from "./state.ts"
import { selectTargets } from "./targets.ts"
import { cohortOf } from "./cohort.ts"
import type { TaskWriteOutcome, TaskWriter } from "./taskWriter.ts"
import { seedNodesOf } from "./seedNodes.ts"

/** What the ImagePullJob reconciler reads: its stores, its settings, its queue, its books and the source secrets; and its task writer. */
interface JobReconcileContext {
  readonly jobs: ControllerStores["jobs"]
  readonly nodeImages: ControllerStores["nodeImages"]
  readonly pods: ControllerStores["pods"]
  readonly secretCopies: ControllerStores["secretCopies"]
  readonly settings: Pick<ControllerSettings, "secretNamespace" | "statusIntervalMs" | "seedNodes">
  readonly queue: WorkQueue
  readonly books: ImagePullJobBooks
  readonly sourceSecrets: SourceSecretBook
  readonly writer: TaskWriter
}

const record = recordEvent("preheat-controller")

/** A node whose NodeImage the API server refused this job's change to (422, Invalid). */
interface RefusedWrite {
  readonly node: string
  readonly error: Invalid
}

interface NodeWritesOutcome {
  /** When to look again, if some writes conflicted. */
  readonly retry: Duration.Duration | undefined
  readonly refused: ReadonlyArray<RefusedWrite>
}

const failedUpdateNodeImage = "FailedUpdateNodeImage"

/**
 * A refused write cannot succeed as it is (the change breaks the NodeImage schema's rules, say
 * one stored before them): a Warning on the job names node and causes, and the reconcile fails
 * once the rest is done (the other nodes' writes, the job's status), so that it is retried after
 * the key's growing backoff instead of at the pace of its wake-ups.
 */
const reportRefused = (job: KubeObject, refused: ReadonlyArray<RefusedWrite>) =>
  Effect.forEach(
    refused,
    ({ node, error }) =>
      record(job, { type: "Warning", reason: failedUpdateNodeImage, message: `failed to update NodeImage ${node}: ${error.message}` }),
    { discard: true }
  )

/**
 * Applies the writes, each NodeImage once, through the task writer (taskWriter.ts), which sends
 * them with other jobs' changes to the same NodeImages in one write; the wait for its answers
 * leaves this reconcile's worker to those jobs meanwhile, so that their changes can join. Returns
 * when to look again if some were not written (another write changed the entries they replace: they
 * are decided again on the newer version), and the writes the API server refused (reportRefused);
 * the other writes go out either way. A write that failed otherwise fails the reconcile, after
 * the others were answered.
 */
const applyNodeWrites = (ctx: JobReconcileContext, writes: ReadonlyArray<NodeWrite>) =>
  Effect.gen(function* () {
    const parts = new Map<string, { readonly decidedOn: KubeObject | undefined; readonly changes: Map<string, NodeWrite["entry"]> }>()
    for (const write of writes) {
      let part = parts.get(write.node)
      if (part === undefined) parts.set(write.node, (part = { decidedOn: ctx.nodeImages.get(write.node), changes: new Map() }))
      part.changes.set(write.image, write.entry)
    }
    let retry: Duration.Duration | undefined
    const refused: Array<RefusedWrite> = []
    let failed: Cause.Cause<WriteError> | undefined
    const answers = parts.size === 0 ? noAnswers : yield* asideFromWorker(ctx.writer.write(parts))
    for (const [node, exit] of answers) {
      if (Exit.isFailure(exit)) failed ??= exit.cause
      else if (exit.value._tag === "Refused") refused.push({ node, error: exit.value.error })
      else if (exit.value._tag === "DecideAgain") retry = Duration.min(retry ?? exit.value.after, exit.value.after)
    }
    if (failed !== undefined) return yield* Effect.failCause(failed)
    return { retry, refused } satisfies NodeWritesOutcome
  })

const noAnswers: ReadonlyMap<string, Exit.Exit<TaskWriteOutcome, WriteError>> = new Map()

/** Wakes the jobs that waited for registry room a job's decision (or its end) freed. */
const wake = (ctx: JobReconcileContext, keys: ReadonlyArray<string>) => Effect.forEach(keys, (key) => ctx.queue.add(key), { discard: true })

/** Deletion: the job's owner references, then tags only it owned, leave every NodeImage; then the finalizer. */
const release = (ctx: JobReconcileContext, raw: KubeObject) =>
  Effect.gen(function* () {
    // Its tags are going: the room they held is handed on now.
    yield* wake(ctx, ctx.books.registries.forget(objectKey(raw)))
    const uid = raw.metadata.uid ?? ""
    const writes: Array<NodeWrite> = []
    for (const [node, image] of ctx.nodeImages.indexes.owners.imagesOf(uid)) {
      const entry = ctx.nodeImages.view(node)?.spec.images?.[image]
      if (entry === undefined) continue
      const released = withoutOwner(entry, uid)
      if (released !== entry) writes.push({ node, image, entry: released })
    }
    const { retry, refused } = yield* applyNodeWrites(ctx, writes)
    yield* reportRefused(raw, refused)
    if (refused[0] !== undefined) return yield* Effect.fail(refused[0].error)
    if (retry !== undefined) return { requeueAfter: retry }
    const finalizers = releasedFinalizers(raw.metadata.finalizers ?? [])
    if (finalizers === undefined) return {}
    const api = yield* KubeApi
    const patched = yield* api
      .patch(resources.imagePullJob, splitKey(objectKey(raw)), {
        metadata: { resourceVersion: raw.metadata.resourceVersion, finalizers }
      })
      .pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
    if (patched !== undefined) yield* ctx.jobs.written(patched)
    return {}
  })

const ensureFinalizer = (ctx: JobReconcileContext, raw: KubeObject) =>
  Effect.gen(function* () {
    const finalizers = heldFinalizers(raw.metadata.finalizers ?? [])
    if (finalizers === undefined) return raw
    const api = yield* KubeApi
    const patched = yield* api.patch(resources.imagePullJob, splitKey(objectKey(raw)), {
      metadata: { resourceVersion: raw.metadata.resourceVersion, finalizers }
    })
    yield* ctx.jobs.written(patched)
    return patched
  })

/**
 * The secret copies the job's tags point at and the pull secrets left out as no usable docker
 * config (the job goes on with the others), or why the job cannot be acted on. A finished job
 * needs none: its copies are released (pullSecrets/copies.ts holdingCopies) and its secrets not read.
 */
const pullSecretsOf = (ctx: JobReconcileContext, job: ImagePullJob) =>
  Effect.gen(function* () {
    const refs: Array<ReferenceObject> = []
    const unusable: Array<InvalidPullSecret> = []
    if (job.status?.completionTime !== undefined) return Result.succeed({ refs, unusable })
    const namespace = job.metadata.namespace ?? ""
    for (const name of job.spec.pullSecrets ?? []) {
      const problem = secretProblem(namespace, name, yield* ctx.sourceSecrets.read(namespace, name))
      if (problem !== undefined) return Result.fail(problem)
      const invalid = ctx.sourceSecrets.invalid(namespace, name)
      if (invalid !== undefined) unusable.push(invalid)
      else refs.push(copyReference(ctx.settings.secretNamespace, namespace, name))
    }
    return Result.succeed({ refs, unusable })
  })

const taskOf = (job: ImagePullJob, uid: string, pullSecrets: ReadonlyArray<ReferenceObject>): JobTask => {
  // Validation already parsed the image, so this cannot fail here.
  const reference = Result.getOrThrow(parseImageReference(job.spec.image))
  const { name, tag } = toNodeImageTask(reference)
  return {
    image: name,
    tag,
    owner: {
      apiVersion: preferredApiVersion,
      kind: "ImagePullJob",
      name: job.metadata.name ?? "",
      namespace: job.metadata.namespace ?? "",
      uid
    },
    imagePullPolicy: effectiveImagePullPolicy(job.spec),
    pullSecrets,
    ...(job.spec.sandboxConfig === undefined ? {} : { sandboxConfig: job.spec.sandboxConfig })
  }
}

/** What the tags a job already wrote must follow: a change means they are brought up to date. */
const taskFingerprint = (job: ImagePullJob, task: JobTask): string => {
  const { completionPolicy, pullPolicy, sandboxConfig } = job.spec
  // The policy as read (either spelling): respelling it is no edit to propagate.
  const { timeoutSeconds, backoffLimit } = pullPolicy
  return JSON.stringify([timeoutSeconds, backoffLimit, completionPolicy, task.imagePullPolicy, sandboxConfig, task.pullSecrets])
}

const lookup =
  (ctx: JobReconcileContext) =>
  (name: string): NodeImage | undefined =>
    ctx.nodeImages.view(name)

/**
 * The job's targets and where they stand, recomputed only when its selection, the nodes' set,
 * labels or pods, or its task changed: selecting, sorting and rotating thousands of nodes on every
 * reconcile was the largest cost of a big job. Otherwise only the NodeImages the change handlers
 * marked are read again.
 */
const progressOf = (ctx: JobReconcileContext, key: string, job: ImagePullJob, task: JobTask) => {
  const { podSelector, selector } = job.spec
  const uid = task.owner.uid
  const seed = cohortOf(job)
  const fingerprint = JSON.stringify([
    uid,
    seed,
    selector,
    podSelector,
    ctx.books.placement.nodes,
    podSelector === undefined ? 0 : ctx.books.placement.pods
  ])
  const read = lookup(ctx)
  const cached = ctx.books.targets.get(key)
  if (cached?.matches(fingerprint, task) === true) {
    cached.refresh(read)
    return cached
  }
  const selected = selectTargets(
    job.spec,
    { namespace: job.metadata.namespace ?? "", seed },
    [...ctx.nodeImages.entries()].map((stored) => stored.view),
    () => [...ctx.pods.entries()].map((stored) => stored.view)
  )
  const progress = new JobProgress(
    fingerprint,
    selected.map((n) => n.metadata.name ?? ""),
    task,
    read
  )
  ctx.books.setTargets(key, progress)
  return progress
}

/**
 * Everything the job owns outside its current task on its current targets, to release. Once
 * released, only a change of the owner index says there is more: tags of another image, or on
 * more nodes than the targets that have the job's tag.
 */
const staleOf = (ctx: JobReconcileContext, progress: JobProgress, task: JobTask) => {
  const uid = task.owner.uid
  const footprint = ctx.nodeImages.indexes.owners.footprint(uid, task.image)
  if (progress.staleReleased && footprint.images <= 1 && footprint.nodes === progress.synced) return []
  return [...ctx.nodeImages.indexes.owners.imagesOf(uid)].flatMap(([node, image]) => {
    const view = ctx.nodeImages.view(node)
    return view === undefined ? [] : [{ node: view, image }]
  })
}

export const reconcileImagePullJob = (
  stores: Pick<ControllerStores, "jobs" | "nodeImages" | "pods" | "secretCopies">,
  settings: JobReconcileContext["settings"],
  queue: WorkQueue,
  books: ImagePullJobBooks,
  sourceSecrets: SourceSecretBook,
  writer: TaskWriter
): Reconcile<KubeApi> =>
  reconcileWith({
    jobs: stores.jobs,
    nodeImages: stores.nodeImages,
    pods: stores.pods,
    secretCopies: stores.secretCopies,
    settings,
    queue,
    books,
    sourceSecrets,
    writer
  })

const reconcileWith = (ctx: JobReconcileContext): Reconcile<KubeApi> =>
  Effect.fn("reconcile ImagePullJob")(function* (key: string) {
    const stored = ctx.jobs.entry(key)
    if (stored === undefined) return {}
    if (stored.raw.metadata.deletionTimestamp !== undefined) return yield* release(ctx, stored.raw)
    const decoded = stored.view
    if (Result.isFailure(decoded)) {
      yield* wake(ctx, ctx.books.registries.forget(key))
      const message = decoded.failure.errors.map((e) => `${e.path}: ${e.message}`).join("; ")
      if (yield* reportInvalid(resources.imagePullJob, ctx.jobs, stored.raw, "Invalid", message)) {
        yield* record(stored.raw, { type: "Warning", reason: "Invalid", message })
      }
      return {}
    }
    const secrets = yield* pullSecretsOf(ctx, decoded.success)
    if (Result.isFailure(secrets)) {
      yield* wake(ctx, ctx.books.registries.forget(key))
      const { message, reason } = secrets.failure
      if (yield* reportInvalid(resources.imagePullJob, ctx.jobs, stored.raw, reason, message)) {
        yield* record(stored.raw, { type: "Warning", reason, message })
      }
      return {}
    }
    const raw = yield* ensureFinalizer(ctx, stored.raw)
    // Only the finalizer was added: the new version is decoded once more (once in a job's life).
    const job = raw === stored.raw ? decoded : decodeImagePullJob(raw)
    if (Result.isFailure(job)) return {}
    const uid = raw.metadata.uid ?? ""
    const task = taskOf(job.success, uid, secrets.success.refs)
    const now = yield* Clock.currentTimeMillis
    const progress = progressOf(ctx, key, job.success, task)
    const stale = staleOf(ctx, progress, task)
    const fingerprint = taskFingerprint(job.success, task)
    const propagateEdits = ctx.books.propagated.get(key) !== fingerprint
    // Room, decision and books in one synchronous step: no other job decides in between (registryBudget.ts).
    const tally = progress.tally(lookup(ctx))
    const registry = registryOf(job.success.spec.image)
    const lowered = ctx.books.registries.observe(key, registry, tally, now)
    const room = ctx.books.registries.room(key, registry, tally.active)
    const decision = decideFromTally({
      job: job.success,
      task,
      tally,
      stale,
      now,
      propagateEdits,
      registry: room,
      unusablePullSecrets: secrets.success.unusable,
      credentialRetries: credentialRetries(ctx, key, task, tally.failed),
      seedNodes: seedNodesOf(raw.metadata.annotations, ctx.settings.seedNodes)
    })
    const finished = decision.deleteJob || decision.status.completionTime !== undefined
    const waiters = ctx.books.registries.settle(key, registry, finished ? 0 : (decision.status.active ?? 0), decision.heldBack)
    yield* wake(ctx, waiters)
    if (lowered !== undefined) yield* announceLowered(raw, lowered)
    // Recorded with the status write that first carries this generation, so once per generation.
    const events = [...decision.events, ...deprecatedFieldEvents(job.success)]
    let written = raw
    if (decision.announceFirst) {
      written = yield* patchStatus(resources.imagePullJob, ctx.jobs, raw, decision.status)
      ctx.books.setStatusWrittenAt(key, now)
      for (const event of events) yield* record(raw, event)
    }
    // Woken when room is made on a node that had none (its spec changes), not by polling.
    for (const node of decision.fullNodes) ctx.books.awaitNewer(node, key)
    const { retry, refused } = yield* applyNodeWrites(ctx, decision.writes)
    yield* reportRefused(raw, refused)
    if (retry !== undefined) return refused[0] === undefined ? { requeueAfter: retry } : yield* Effect.fail(refused[0].error)
    // Settled once a full look found nothing left to release (what it released is checked again).
    progress.staleReleased = stale.every(({ image, node }) => {
      const entry = node.spec.images?.[image]
      const keep = image === task.image && progress.has(node.metadata.name ?? "") ? task.tag : undefined
      return entry === undefined || withoutOwner(entry, uid, keep) === entry
    })
    ctx.books.setPropagated(key, fingerprint)
    // Announced: written already, so the write below finds nothing to send. An event goes with the
    // status it was decided against: a Progress milestone left unwritten was crossed again (and
    // recorded again) by every reconcile until the counters' next write.
    const statusDue =
      decision.announceFirst || events.length > 0
        ? 0
        : statusWriteDue(ctx, key, raw["status"] as ImagePullJobStatus | undefined, decision.status, now)
    if (statusDue === 0) {
      yield* patchStatus(resources.imagePullJob, ctx.jobs, written, decision.status)
      ctx.books.setStatusWrittenAt(key, now)
    }
    if (!decision.announceFirst) for (const event of events) yield* record(raw, event)
    if (decision.deleteJob) {
      const api = yield* KubeApi
      yield* api.delete(resources.imagePullJob, splitKey(key), { uid }).pipe(Effect.catchTag("NotFound", () => Effect.void))
      return {}
    }
    if (refused[0] !== undefined) return yield* Effect.fail(refused[0].error)
    const wakeAt = statusDue === 0 ? decision.wakeAt : Math.min(decision.wakeAt ?? Infinity, now + statusDue)
    return wakeAt === undefined ? {} : { requeueAfter: Duration.millis(Math.max(0, wakeAt - now)) }
  }, Effect.mapError(retryable))

/**
 * The failed targets to pull on again since the credentials the job's nodes pull with changed:
 * the copies its task points at, as the store has them (so a retry is written only once the copy
 * it needs is on the server, for the daemon to read at its next attempt), and the credential
 * providers the nodes' daemons found answering anew.
 */
const credentialRetries = (
  ctx: JobReconcileContext,
  key: string,
  task: JobTask,
  failed: TargetTally["failed"]
): ReadonlyArray<CredentialRetry<NodeImage>> => {
  const seen = credentialsOf(task.pullSecrets, (ref) => {
    const data = ctx.secretCopies.get(keyOf(ref.namespace, ref.name ?? ""))?.["data"]
    return Predicate.isObject(data) ? ctx.books.digestOf(data) : undefined
  })
  const versionOf = (node: string) => ctx.nodeImages.view(node)?.spec.images?.[task.image]?.tags.find((t) => t.tag === task.tag)?.version
  const due = retriesDue(ctx.books.retries.get(key) ?? noRetries, renewed(ctx.books.credentials.get(key), seen), failed, versionOf)
  ctx.books.setCredentials(key, seen, due)
  return retriesOf(failed, due).flatMap((retry) => {
    const node = ctx.nodeImages.view(retry.node)
    return node === undefined ? [] : [{ ...retry, node }]
  })
}

const noRetries: ReadonlyMap<string, number> = new Map()

/** A registry's limit lowered by throttling: in the log, and a Warning on the job whose nodes reported it. */
const announceLowered = (job: KubeObject, lowered: LimitLowered) => {
  const message = loweredMessage(lowered)
  return Effect.andThen(
    Effect.logWarning("registry throttles pulls: limit lowered").pipe(
      Effect.annotateLogs({ registry: lowered.registry, from: lowered.from ?? "none", to: lowered.to })
    ),
    record(job, { type: "Warning", reason: registryThrottledReason, message })
  )
}

/** The fields whose change is news: a start, a completion, a condition, a new target set. */
const milestones = (status: ImagePullJobStatus | undefined) =>
  JSON.stringify([status?.startTime, status?.completionTime, status?.desired, status?.conditions, status?.observedGeneration])

/**
 * Milliseconds until the job's status may be written, 0 for now. A change of counters only is
 * written at most once per statusIntervalMs (the rest wait for the next one), so that status
 * writes are amortised over many nodes; milestones are written at once.
 */
const statusWriteDue = (
  ctx: JobReconcileContext,
  key: string,
  stored: ImagePullJobStatus | undefined,
  next: ImagePullJobStatus,
  now: number
): number => {
  if (milestones(stored) !== milestones(next)) return 0
  const last = ctx.books.statusWrittenAt.get(key)
  return last === undefined ? 0 : Math.max(0, last + ctx.settings.statusIntervalMs - now)
}
