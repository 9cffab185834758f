import { millisOf } from "../api/time.ts"
import { Result } from "effect"
import { decodeImageListPullJob, decodeImagePullJob, decodeNodeImage } from "../api/decode.ts"
import type { ImageListPullJob } from "../api/imageListPullJob.ts"
import { digestMismatch, type ImagePullJob, seeded } from "../api/imagePullJob.ts"
import { parseImageReference, toNodeImageTask } from "../api/imageReference.ts"
import { nodeVerificationPolicies, preloadedVerdict } from "../api/kubeletImageVerification.ts"
import type { Condition } from "../api/meta.ts"
import type { NodeImage } from "../api/nodeImage.ts"
import { ownTagStatus } from "../api/ownTag.ts"
import { resolveParallelism } from "../api/parallelism.ts"
import type { Parallelism } from "../api/jobTemplate.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import type { JobPhase, JobView, NodeRow, PreloadedNodes, StatusModel } from "./model.ts"
import { warmingNodes } from "./warmingNodes.ts"

export interface StatusObjects {
  readonly namespace: string
  readonly job?: string | undefined
  readonly imagePullJobs: Iterable<KubeObject>
  readonly imageListPullJobs: Iterable<KubeObject>
  /** Decoded once per version by the store that holds them (runStatus.ts); undefined: does not decode. */
  readonly nodeImages: Iterable<NodeImage | undefined>
  /** The Nodes and preheat's startup taint key, to list the nodes warming; absent: not shown. */
  readonly warming?: { readonly nodes: Iterable<KubeObject>; readonly taintKey: string } | undefined
}

/** A NodeImage as the view reads it, or undefined when it does not decode (the status store's view). */
export const statusNodeImage = (object: KubeObject): NodeImage | undefined => {
  const result = decodeNodeImage(object)
  return Result.isSuccess(result) ? result.success : undefined
}

const condition = (conditions: ReadonlyArray<Condition> | undefined, type: string) => conditions?.find((c) => c.type === type)

interface Lifecycle {
  readonly conditions?: ReadonlyArray<Condition>
  readonly completionTime?: string
}

/** Invalid wins (the controller will not act on it), then completed, then paused (parallelism 0). */
const phaseOf = (status: Lifecycle | undefined, parallelism: Parallelism, desired: number): { phase: JobPhase; why?: string } => {
  const valid = condition(status?.conditions, "Valid")
  if (valid?.status === "False") return { phase: "invalid", ...(valid.message === undefined ? {} : { why: valid.message }) }
  if (status?.completionTime !== undefined || condition(status?.conditions, "Complete")?.status === "True") {
    return { phase: "completed" }
  }
  return { phase: resolveParallelism(parallelism, Math.max(1, desired)) === 0 ? "paused" : "running" }
}

const nameOf = (object: KubeObject): string => object.metadata.name ?? ""
const parentOf = (object: KubeObject): string | undefined =>
  object.metadata.ownerReferences?.find((o) => o.kind === "ImageListPullJob")?.name

const invalidView = (kind: JobView["kind"], object: KubeObject, message: string): JobView => {
  const parent = parentOf(object)
  return {
    kind,
    namespace: object.metadata.namespace ?? "",
    name: nameOf(object),
    target: "",
    ...(parent === undefined ? {} : { parent }),
    phase: "invalid",
    message,
    desired: 0,
    active: 0,
    succeeded: 0,
    failed: 0,
    nodes: []
  }
}

/**
 * The nodes where the job's own tag (same image key, tag, owner uid and spec version, as the
 * controller judges it, ownTag.ts) is pulling or failed; other phases are not news.
 */
const nodeRows = (job: ImagePullJob, nodes: ReadonlyArray<NodeImage>): ReadonlyArray<NodeRow> => {
  const uid = job.metadata.uid
  const reference = parseImageReference(job.spec.image)
  if (uid === undefined || Result.isFailure(reference)) return []
  const { name: image, tag } = toNodeImageTask(reference.success)
  const rows: Array<NodeRow> = []
  /** Nodes with the job's tag that the daemon has not reported on yet (it writes Pulling only once a pull outlives 2 s). */
  const unreported = new Set<string>()
  for (const node of nodes) {
    const status = ownTagStatus(node, image, tag, uid)
    if (status === undefined) unreported.add(node.metadata.name ?? "")
    if (status === null || status === undefined || (status.phase !== "Pulling" && status.phase !== "Failed")) continue
    const startTime = millisOf(status.startTime)
    rows.push({
      node: node.metadata.name ?? "",
      phase: status.phase,
      ...(status.progress === undefined ? {} : { progress: status.progress }),
      ...(startTime === undefined ? {} : { startTime }),
      ...(status.message === undefined ? {} : { message: status.message })
    })
  }
  // Nodes the job counts as failed with no report of a failure: still pulling when its deadline
  // passed (the controller counts an unreported tag as pulling), or their tag is gone already
  // (e.g. removed after its TTL).
  const shown = new Set(rows.map((r) => r.node))
  for (const node of job.status?.failedNodes ?? []) {
    if (!shown.has(node)) rows.push({ node, phase: unreported.has(node) ? "Pulling" : "Failed" })
  }
  // Pulling first (what is happening), then failures; by name within each.
  return rows.sort((a, b) => (a.phase === b.phase ? a.node.localeCompare(b.node) : a.phase === "Pulling" ? -1 : 1))
}

/** The nodes named for each case of the kubelet's verification; the rest are counted. */
const preloadedExamples = 5

type Group = { nodes: number; examples: Array<{ node: string; why: string }> }

const addTo = (group: Group | undefined, node: string, why: string): Group => {
  const g = group ?? { nodes: 0, examples: [] }
  g.nodes++
  if (g.examples.length < preloadedExamples) g.examples.push({ node, why })
  return g
}

/**
 * What the kubelets of the nodes that have the job's image do with it (api/kubeletImageVerification.ts,
 * as the controller's Preloaded* conditions judge it): the nodes where any pod can start it without
 * credentials, shown for an image that needs them; those where pods check theirs with the registry at start.
 */
const preloadedNodes = (
  job: ImagePullJob,
  nodes: ReadonlyArray<NodeImage>
): { readonly unverified?: PreloadedNodes; readonly reverified?: PreloadedNodes } => {
  const uid = job.metadata.uid
  const reference = parseImageReference(job.spec.image)
  if (uid === undefined || Result.isFailure(reference)) return {}
  const { name: image, tag } = toNodeImageTask(reference.success)
  let unverified: Group | undefined
  let reverified: Group | undefined
  let authenticated = false
  for (const node of nodes) {
    const status = ownTagStatus(node, image, tag, uid)
    if (status === null || status === undefined || status.phase !== "Succeeded") continue
    if (status.authenticated === true) authenticated = true
    const name = node.metadata.name ?? ""
    const verdict = preloadedVerdict(node.status?.kubeletImageVerification, image)
    if (verdict.access === "unverified") unverified = addTo(unverified, name, verdict.why)
    else if (verdict.access === "reverified") reverified = addTo(reverified, name, verdict.why)
  }
  const needsCredentials = authenticated || (job.spec.pullSecrets ?? []).length > 0
  return {
    ...(unverified === undefined || !needsCredentials ? {} : { unverified }),
    ...(reverified === undefined ? {} : { reverified })
  }
}

/** Nodes by their kubelet's policy, in the order of api/kubeletImageVerification.ts; absent when no daemon reported one. */
const policyCounts = (nodes: ReadonlyArray<NodeImage>): StatusModel["policies"] => {
  const counts = new Map<string, number>()
  for (const node of nodes) {
    const policy = node.status?.kubeletImageVerification?.policy
    if (policy !== undefined) counts.set(policy, (counts.get(policy) ?? 0) + 1)
  }
  if (counts.size === 0) return undefined
  return nodeVerificationPolicies.flatMap((policy) => {
    const n = counts.get(policy)
    return n === undefined ? [] : [{ policy, nodes: n }]
  })
}

const times = (status: (Lifecycle & { readonly startTime?: string }) | undefined) => {
  const startTime = millisOf(status?.startTime)
  const completionTime = millisOf(status?.completionTime)
  return {
    ...(startTime === undefined ? {} : { startTime }),
    ...(completionTime === undefined ? {} : { completionTime })
  }
}

/** Where a running job that seeds stands (its Seeded condition, seedingCondition.ts), and a bad seed-nodes value. */
const seedingOf = (status: ImagePullJob["status"], phase: JobPhase): Pick<JobView, "stage" | "seedingProblem"> => {
  const seeding = condition(status?.conditions, seeded)
  if (seeding?.reason === "InvalidSeedNodes") return seeding.message === undefined ? {} : { seedingProblem: seeding.message }
  if (phase !== "running" || seeding === undefined) return {}
  if (seeding.reason === "Seeding") return { stage: "seeding" }
  const unfinished = (status?.desired ?? 0) - (status?.succeeded ?? 0) - (status?.failed ?? 0)
  return seeding.status === "True" && unfinished > 0 ? { stage: "fanning out" } : {}
}

const pullJobView = (object: KubeObject, nodes: ReadonlyArray<NodeImage>): JobView => {
  const decoded = decodeImagePullJob(object)
  if (Result.isFailure(decoded)) return invalidView("ImagePullJob", object, decoded.failure.message)
  const job = decoded.success
  const status = job.status
  const desired = status?.desired ?? 0
  const { phase, why } = phaseOf(status, job.spec.parallelism, desired)
  const parent = parentOf(object)
  const mismatch = condition(status?.conditions, digestMismatch)
  return {
    kind: "ImagePullJob",
    namespace: job.metadata.namespace ?? "",
    name: job.metadata.name ?? "",
    target: job.spec.image,
    ...(parent === undefined ? {} : { parent }),
    phase,
    ...seedingOf(status, phase),
    message: why ?? status?.message ?? "",
    desired,
    active: status?.active ?? 0,
    succeeded: status?.succeeded ?? 0,
    failed: status?.failed ?? 0,
    ...times(status),
    nodes: phase === "invalid" ? [] : nodeRows(job, nodes),
    ...(status?.imageDigests === undefined ? {} : { digests: status.imageDigests }),
    ...(mismatch?.status === "True"
      ? { digestMismatch: mismatch.message ?? "the job's nodes resolved the image to different digests" }
      : {}),
    ...(phase === "invalid" ? {} : preloadedNodes(job, nodes))
  }
}

const listMessage = (job: ImageListPullJob): string => {
  const failed = job.status?.failedImageStatuses ?? []
  if (failed.length === 0) return ""
  return failed.map((f) => `${f.name ?? f.imagePullJob ?? "?"}: ${f.message ?? "failed"}`).join("; ")
}

/** A list job counts child jobs, not nodes: the bar and ETA are over its images. */
const listJobView = (object: KubeObject): JobView => {
  const decoded = decodeImageListPullJob(object)
  if (Result.isFailure(decoded)) return invalidView("ImageListPullJob", object, decoded.failure.message)
  const job = decoded.success
  const status = job.status
  const desired = status?.desired ?? job.spec.images.length
  const { phase, why } = phaseOf(status, job.spec.parallelism, desired)
  const completed = status?.completed ?? 0
  const succeeded = status?.succeeded ?? 0
  const mismatch = condition(status?.conditions, digestMismatch)
  return {
    kind: "ImageListPullJob",
    namespace: job.metadata.namespace ?? "",
    name: job.metadata.name ?? "",
    target: `${job.spec.images.length} images`,
    phase,
    message: why ?? listMessage(job),
    desired,
    active: status?.active ?? 0,
    succeeded,
    failed: Math.max(0, completed - succeeded),
    ...times(status),
    nodes: [],
    ...(mismatch?.status === "True" && mismatch.message !== undefined ? { digestMismatch: mismatch.message } : {})
  }
}

/**
 * The view of one namespace's jobs (or one job, with the child jobs of a list job of that name),
 * each list job followed by its children.
 */
export const buildModel = (objects: StatusObjects): StatusModel => {
  const nodes = [...objects.nodeImages].flatMap((node) => (node === undefined ? [] : [node]))
  const policies = policyCounts(nodes)
  const jobs = [...[...objects.imageListPullJobs].map(listJobView), ...[...objects.imagePullJobs].map((o) => pullJobView(o, nodes))]
    .filter((j) => j.namespace === objects.namespace)
    .filter((j) => objects.job === undefined || j.name === objects.job || j.parent === objects.job)
  const group = (j: JobView) => j.parent ?? j.name
  jobs.sort(
    (a, b) =>
      group(a).localeCompare(group(b)) || Number(a.parent !== undefined) - Number(b.parent !== undefined) || a.name.localeCompare(b.name)
  )
  return {
    namespace: objects.namespace,
    ...(objects.job === undefined ? {} : { job: objects.job }),
    jobs,
    ...(objects.warming === undefined ? {} : { warming: warmingNodes(objects.warming.nodes, nodes, objects.warming.taintKey) }),
    ...(policies === undefined ? {} : { policies })
  }
}
