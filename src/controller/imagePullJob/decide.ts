import { crossedMilestone, progressMessage } from "./milestones.ts"
import { escapeForeignText, quoteBounded } from "../../api/goQuote.ts"
import type { ImagePullJob, ImagePullJobStatus } from "../../api/imagePullJob.ts"
import type { ImageSpec, NodeImage } from "../../api/nodeImage.ts"
import { resolveParallelism } from "../../api/parallelism.ts"
import type { ObjectEvent } from "../../kube/events.ts"
import { observed, setCondition } from "../status/conditions.ts"
import { nodeState, reportedVersion, withoutOwner, withRetry, withTask } from "./nodeTask.ts"
import type { JobTask } from "./nodeTask.ts"
import { changedCredentials, type CredentialRetry } from "./credentialRenewal.ts"
import { digestVerdict } from "./digestCondition.ts"
import { DigestTally, type DigestNodes, imageDigestsOf } from "./digestTally.ts"
import { preloadedVerdicts } from "./preloadedConditions.ts"
import { noPreloaded, type PreloadedSummary, PreloadedTally } from "./preloadedTally.ts"
import { pullSecretVerdict } from "./pullSecretCondition.ts"
import type { UnusablePullSecret } from "./pullSecretCondition.ts"
import { fullNote } from "./nodeRoom.ts"
import { seedFirst, targetOrder } from "./pullOrder.ts"
import type { PullOrder } from "./pullOrder.ts"
import { heldBackNote } from "./registryRoom.ts"
import type { RegistryRoom } from "./registryRoom.ts"
import { tagPullPolicy } from "./tagPolicy.ts"
import type { SeedNodes } from "./seedNodes.ts"
import { seedingVerdict, unseededAtEnd } from "./seedingCondition.ts"
import { rfc3339 } from "../../api/time.ts"

/** A new image entry for one node; `entry: undefined` removes the image from the node. */
export interface NodeWrite {
  readonly node: string
  readonly image: string
  readonly entry: ImageSpec | undefined
}

export interface JobDecision {
  readonly writes: ReadonlyArray<NodeWrite>
  readonly status: ImagePullJobStatus
  readonly events: ReadonlyArray<ObjectEvent>
  readonly deleteJob: boolean
  /** Reconcile again at this time (ms since epoch) even if nothing changes: a deadline or a TTL. */
  readonly wakeAt: number | undefined
  /** Nodes that would start now under parallelism but wait for room on the registry. */
  readonly heldBack: number
  /**
   * Nodes that would start now but whose NodeImage holds as many images as it may (256, as
   * upstream's): the job is woken when one of their specs changes, instead of writing what the API
   * server refuses (a retry loop of full-size invalid writes, thousands a minute at 500 jobs).
   */
  readonly fullNodes: ReadonlyArray<string>
  /**
   * Whether the status and events go out before the node writes: a pull secret newly found
   * unusable is on the job (PullSecretInvalid, a Warning) before any node pulls without it.
   */
  readonly announceFirst: boolean
}

export interface JobInput {
  readonly job: ImagePullJob
  readonly task: JobTask
  readonly targets: ReadonlyArray<NodeImage>
  /** Tags of this job on other nodes or under another name: left over from an edit, to release. */
  readonly stale: ReadonlyArray<{ readonly node: NodeImage; readonly image: string }>
  readonly now: number
  /**
   * Whether to bring the tags already written up to date with the job's spec. The caller skips it
   * while the spec is unchanged since the last time every tag was brought up to date.
   */
  readonly propagateEdits: boolean
  /** The job's room on its registry under `--max-concurrent-pulls-per-registry`; absent: no limit. */
  readonly registry?: RegistryRoom | undefined
  /** The job's pull secrets that are no usable docker config: left out of its task, and said in its status. */
  readonly unusablePullSecrets?: ReadonlyArray<UnusablePullSecret> | undefined
  /**
   * Failed targets to pull on again since the credentials changed (credentialRenewal.ts), in
   * target order: given their tag's next version when the pull order says (pullOrder.ts).
   */
  readonly credentialRetries?: ReadonlyArray<CredentialRetry<NodeImage>> | undefined
  /** Which targets get the tag when; absent: targetOrder (pullOrder.ts). */
  readonly pullOrder?: PullOrder | undefined
  /** Seed-first fan-out (seedNodes.ts): the seeds pull first, within that order; absent: none. */
  readonly seedNodes?: SeedNodes | undefined
}

/**
 * Where a job's targets stand for its task, counted over all of them, with only the nodes a
 * decision names: the first ones still without the task, the failed ones, and (for a deadline or
 * an edit) the rest. A reconcile keeps this up to date from the NodeImages that changed, so it
 * costs what changed rather than a walk of every target.
 */
export interface TargetTally {
  readonly desired: number
  readonly active: number
  readonly succeeded: number
  /**
   * Reports of throttled attempts (api/registryThrottle.ts) seen so far: a count that grows with
   * each new one, so that the registry's limit is stepped on what is new (registryBudget.ts observe).
   */
  readonly throttleReports: number
  /** Failed targets, in target order, with the credential providers found answering anew since (nodeTask.ts NodeState). */
  readonly failed: ReadonlyArray<FailedTarget>
  /** The digests the succeeded targets resolved the image to (those that reported one). */
  readonly digests: ReadonlyArray<DigestNodes>
  /** What the succeeded targets' kubelets do with the image, which they did not pull (KEP-2535). */
  readonly preloaded: PreloadedSummary
  /**
   * Up to `limit` targets without the job's tag yet that `fits` accepts, in target order, and the
   * names of those it refused on the way.
   */
  readonly waiting: (limit: number, fits: (node: NodeImage) => boolean) => WaitingTargets
  /** Targets that have the job's tag (any phase), in target order: to bring edits to. */
  readonly synced: () => Iterable<NodeImage>
  /** Targets neither succeeded nor failed, in target order. */
  readonly unfinished: () => ReadonlyArray<string>
  /** Whether a node is a target. */
  readonly targets: (node: string) => boolean
}

export interface FailedTarget {
  readonly node: string
  readonly message: string
  readonly renewedBy: ReadonlyArray<string>
}

export interface WaitingTargets {
  readonly ready: ReadonlyArray<NodeImage>
  readonly refused: ReadonlyArray<string>
}

/** Takes up to `limit` nodes `fits` accepts from `nodes`, in order, naming those it refused before them. */
export const takeWaiting = (nodes: Iterable<NodeImage>, limit: number, fits: (node: NodeImage) => boolean): WaitingTargets => {
  const ready: Array<NodeImage> = []
  const refused: Array<string> = []
  if (limit <= 0) return { ready, refused }
  for (const node of nodes) {
    if (fits(node)) ready.push(node)
    else refused.push(node.metadata.name ?? "")
    if (ready.length >= limit) break
  }
  return { ready, refused }
}

/** The tally of a list of targets, computed by walking them all. */
export const tallyOf = (targets: ReadonlyArray<NodeImage>, task: JobTask): TargetTally => {
  const failed: Array<FailedTarget> = []
  const waiting: Array<NodeImage> = []
  const synced: Array<NodeImage> = []
  const unfinished: Array<string> = []
  let active = 0
  let succeeded = 0
  const digests = new DigestTally(targets.length)
  const preloaded = new PreloadedTally(targets.length)
  let throttleReports = 0
  for (const [i, node] of targets.entries()) {
    const name = node.metadata.name ?? ""
    const state = nodeState(node, task)
    if (state.phase === "notSynced") {
      waiting.push(node)
      unfinished.push(name)
      continue
    }
    synced.push(node)
    if (state.phase === "active") {
      active++
      if (state.throttled !== undefined) throttleReports++
      unfinished.push(name)
    } else if (state.phase === "succeeded") {
      succeeded++
      if (state.digest !== undefined) digests.add(state.digest, i)
      preloaded.add(i, state.preloaded, state.authenticated)
    } else failed.push({ node: name, message: state.message, renewedBy: state.renewedBy })
  }
  const names = new Set(targets.map((n) => n.metadata.name ?? ""))
  return {
    desired: targets.length,
    active,
    succeeded,
    throttleReports,
    failed,
    digests: digests.summary((i) => targets[i]?.metadata.name ?? ""),
    preloaded: preloaded.summary((i) => targets[i]?.metadata.name ?? ""),
    waiting: (limit, fits) => takeWaiting(waiting, limit, fits),
    synced: () => synced,
    unfinished: () => unfinished,
    targets: (node) => names.has(node)
  }
}

/** decideImagePullJob on a list of targets (walked once into a tally). */
export const decideImagePullJob = (input: JobInput): JobDecision => decideFromTally({ ...input, tally: tallyOf(input.targets, input.task) })

export interface TallyInput extends Omit<JobInput, "targets"> {
  readonly tally: TargetTally
}

/**
 * Whether this reconcile starts the job over on every node: its imagePullPolicy is Always and its
 * generation moved past the one its status was computed for (an edit, `kubectl apply` of a changed
 * spec). That is how nodes that resolved a mutable tag to different digests converge on the tag's
 * current one. Decided once per generation: the status written carries the new observedGeneration.
 */
const repullsAll = (job: ImagePullJob, task: JobTask): boolean => {
  const seen = job.status?.observedGeneration
  const generation = job.metadata.generation
  return task.imagePullPolicy === "Always" && seen !== undefined && generation !== undefined && generation > seen
}

const percent = (done: number, desired: number): string => (desired === 0 ? 100 : (done / desired) * 100).toFixed(1)

/**
 * One ImagePullJob, decided from the NodeImages it targets at one instant (SPEC §2 ImagePullJob):
 * which tasks to write, the status, the events, and when to look again. Pure: the caller reads
 * the stores and applies the writes.
 */
export const decideFromTally = ({
  job,
  now,
  propagateEdits,
  registry,
  stale,
  tally,
  task,
  unusablePullSecrets = [],
  credentialRetries = [],
  pullOrder = targetOrder,
  seedNodes = { _tag: "Off" }
}: TallyInput): JobDecision => {
  const { spec } = job
  const previous = job.status
  const nowIso = rfc3339(now)
  const events: Array<ObjectEvent> = []
  const always = spec.completionPolicy.type === "Always"
  const repull = repullsAll(job, task)

  if (previous?.completionTime !== undefined && !repull) {
    const ttl = spec.completionPolicy.ttlSecondsAfterFinished
    const deleteAt = ttl === undefined ? undefined : Date.parse(previous.completionTime) + ttl * 1000
    const expired = deleteAt !== undefined && deleteAt <= now
    return {
      writes: [],
      status: observed(previous, job.metadata.generation),
      events: expired ? [{ type: "Normal", reason: "DeletedByTTL", message: `job deleted ${ttl}s after it finished` }] : [],
      deleteJob: expired,
      wakeAt: expired ? undefined : deleteAt,
      heldBack: 0,
      fullNodes: [],
      announceFirst: false
    }
  }

  // A new generation of an Always job starts over (a finished one too): deadline and counts with it.
  const startTime = repull ? nowIso : (previous?.startTime ?? nowIso)
  if (previous?.startTime === undefined) {
    events.push({ type: "Normal", reason: "Started", message: `pulling ${quoteBounded(spec.image)} on ${tally.desired} nodes` })
  }

  const writes: Array<NodeWrite> = []
  for (const { image, node } of stale) {
    const name = node.metadata.name ?? ""
    const entry = node.spec.images?.[image]
    if (entry === undefined) continue
    // On a node still targeted, the job's current tag stays; elsewhere everything of the job goes.
    const keep = image === task.image && tally.targets(name) ? task.tag : undefined
    const released = withoutOwner(entry, task.owner.uid, keep)
    if (released !== entry) writes.push({ node: name, image, entry: released })
  }

  const succeeded = repull ? 0 : tally.succeeded
  const digests = repull ? [] : tally.digests
  const preloaded = repull ? noPreloaded : tally.preloaded
  let active = repull ? 0 : tally.active
  if (repull) {
    // The job lets go of every node's tag: each is written again, within parallelism, with a new
    // version (withTask), which the daemon pulls again, resolving the tag anew.
    let released = 0
    for (const node of tally.synced()) {
      const entry = node.spec.images?.[task.image]
      if (entry === undefined) continue
      writes.push({ node: node.metadata.name ?? "", image: task.image, entry: withoutOwner(entry, task.owner.uid) })
      released++
    }
    events.push({
      type: "Normal",
      reason: "Repulling",
      message: `generation ${job.metadata.generation}: pulling ${quoteBounded(spec.image)} again on every node (imagePullPolicy Always), ${released} pulled before`
    })
  } else if (propagateEdits) {
    // Edits of a running job reach the tags it already wrote (SPEC §4.6).
    for (const node of tally.synced()) {
      const name = node.metadata.name ?? ""
      const entry = node.spec.images?.[task.image]
      const updated = withTask(entry, task, tagPullPolicy(spec, `${task.owner.uid}/${name}`), nowIso, undefined)
      if (updated !== entry) writes.push({ node: name, image: task.image, entry: updated })
    }
  }

  const desired = tally.desired
  const parallelism = resolveParallelism(spec.parallelism, desired)
  const deadline = always ? spec.completionPolicy.activeDeadlineSeconds : undefined
  const deadlineAt = deadline === undefined ? undefined : Date.parse(startTime) + deadline * 1000
  const pastDeadline = deadlineAt !== undefined && deadlineAt <= now
  const seeding = seedingVerdict({ seedNodes, previous: previous?.conditions, repull, desired, succeeded, image: quoteBounded(spec.image) })
  const order = seeding.seeds === undefined ? pullOrder : seedFirst(seeding.seeds, pullOrder)

  let heldBack = 0
  let fullNodes: ReadonlyArray<string> = []
  const retried = new Set<string>()
  if (!pastDeadline) {
    // A job starting over has no failed targets to retry. A retry held back by the registry is
    // woken like the other nodes held back when room frees.
    const turn = order.next({
      image: task.image,
      desired,
      active,
      succeeded,
      parallelism,
      waiting: tally.waiting,
      registry,
      retries: repull ? [] : credentialRetries.map((retry) => retry.node)
    })
    fullNodes = turn.fullNodes
    heldBack = turn.heldBack
    for (const node of turn.start) {
      const name = node.metadata.name ?? ""
      const entry = node.spec.images?.[task.image]
      const policy = tagPullPolicy(spec, `${task.owner.uid}/${name}`)
      writes.push({
        node: name,
        image: task.image,
        entry: withTask(entry, task, policy, nowIso, reportedVersion(node, task.image, task.tag))
      })
      active++
    }
    for (const node of turn.retry) {
      const name = node.metadata.name ?? ""
      const policy = tagPullPolicy(spec, `${task.owner.uid}/${name}`)
      writes.push({ node: name, image: task.image, entry: withRetry(node.spec.images?.[task.image], task, policy, nowIso) })
      retried.add(name)
      active++
    }
    if (retried.size > 0) {
      events.push({
        type: "Normal",
        reason: "CredentialsChanged",
        message: `${changedCredentials(credentialRetries.filter((retry) => turn.retry.includes(retry.node)))} changed: pulling ${quoteBounded(spec.image)} again on ${retried.size} ${retried.size === 1 ? "node" : "nodes"} where it failed`
      })
    }
  }
  // A node pulling again is active, no longer failed (failing again, it gets a new NodeFailed).
  const failedNodes = repull ? [] : retried.size === 0 ? tally.failed : tally.failed.filter((f) => !retried.has(f.node))

  const previouslyFailed = new Set(repull ? [] : (previous?.failedNodes ?? []))
  for (const { message: why, node } of failedNodes) {
    if (!previouslyFailed.has(node)) {
      // The tag's message is the daemon's, but the NodeImage status is writable by hand: escaped again.
      events.push({ type: "Warning", reason: "NodeFailed", message: `node ${node}: ${escapeForeignText(why)}` })
    }
  }

  const unfinished = desired - succeeded - failedNodes.length
  const failedNames = failedNodes.map((f) => f.node)
  let completionTime: string | undefined
  let message: string
  if (pastDeadline) {
    completionTime = nowIso
    message = "job exceeds activeDeadlineSeconds"
    failedNames.push(...tally.unfinished())
    events.push({
      type: "Warning",
      reason: "DeadlineExceeded",
      message: `${unfinished} nodes unfinished after ${deadline}s`
    })
  } else if (always && unfinished === 0) {
    completionTime = nowIso
    message = "job has completed"
    events.push({
      type: "Normal",
      reason: "Completed",
      message: `pulled on ${succeeded} of ${desired} nodes, ${failedNodes.length} failed`
    })
  } else {
    const progress = percent(succeeded + failedNodes.length, desired)
    const state =
      parallelism === 0
        ? "is paused"
        : seeding.seeds === undefined
          ? "is running"
          : `is seeding, ${succeeded} of ${seeding.seeds} seed nodes pulled`
    message = `job ${state}, progress ${progress}%`
    if (heldBack > 0 && registry !== undefined) message += `, ${heldBackNote(heldBack, registry)}`
    if (fullNodes.length > 0) message += `, ${fullNote(fullNodes.length)}`
  }

  const finished = completionTime !== undefined
  // A finished job's Completed or DeadlineExceeded says how far it got.
  const milestone = finished ? undefined : crossedMilestone(previous?.succeeded ?? 0, tally.succeeded, desired)
  if (milestone !== undefined) events.push({ type: "Normal", reason: "Progress", message: progressMessage(tally.succeeded, desired) })
  let conditions = setCondition(previous?.conditions, { type: "Valid", status: "True", reason: "Valid" }, nowIso)
  const secrets = pullSecretVerdict(previous?.conditions, unusablePullSecrets)
  if (secrets.condition !== undefined) conditions = setCondition(conditions, secrets.condition, nowIso)
  if (secrets.event !== undefined) events.unshift(secrets.event)
  const digestCheck = digestVerdict(quoteBounded(spec.image), previous?.conditions, previous?.imageDigests, digests)
  if (digestCheck.condition !== undefined) conditions = setCondition(conditions, digestCheck.condition, nowIso)
  if (digestCheck.event !== undefined) events.push(digestCheck.event)
  const access = preloadedVerdicts(quoteBounded(spec.image), previous?.conditions, (spec.pullSecrets ?? []).length > 0, preloaded)
  for (const condition of access.conditions) conditions = setCondition(conditions, condition, nowIso)
  events.push(...access.events)
  const seeded = finished ? unseededAtEnd(seeding, previous?.conditions) : seeding.condition
  if (seeded !== undefined) conditions = setCondition(conditions, seeded, nowIso)
  if (seeding.event !== undefined) events.push(seeding.event)
  if (finished) {
    const reason = pastDeadline ? "DeadlineExceeded" : "Completed"
    conditions = setCondition(conditions, { type: "Complete", status: "True", reason, message }, nowIso)
  } else if (repull && previous?.completionTime !== undefined) {
    // Reopened: `kubectl wait --for=condition=Complete` waits for this generation's end.
    conditions = setCondition(conditions, { type: "Complete", status: "False", reason: "Repulling", message }, nowIso)
  }
  const imageDigests = imageDigestsOf(digests)
  const status: ImagePullJobStatus = {
    startTime,
    ...(completionTime === undefined ? {} : { completionTime }),
    desired,
    active: finished ? 0 : active,
    succeeded,
    failed: failedNames.length,
    ...(failedNames.length === 0 ? {} : { failedNodes: [...failedNames].sort() }),
    ...(imageDigests === undefined ? {} : { imageDigests }),
    message,
    conditions,
    ...(job.metadata.generation === undefined ? {} : { observedGeneration: job.metadata.generation })
  }
  const ttl = spec.completionPolicy.ttlSecondsAfterFinished
  const wakeAt = finished ? (ttl === undefined ? undefined : now + ttl * 1000) : deadlineAt
  return {
    writes,
    status,
    events,
    deleteJob: false,
    wakeAt,
    heldBack: finished ? 0 : heldBack,
    fullNodes: finished ? [] : fullNodes,
    announceFirst: secrets.event !== undefined
  }
}
