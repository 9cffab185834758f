// `preheat allowlist`: the kubelet's preloadedImagesVerificationAllowlist entries for the images of
// given jobs, for nodes whose kubelets run NeverVerifyAllowlistedImages (KEP-2535): pods then start
// those images, preloaded by preheat, without checking credentials with the registry first.
import { Result } from "effect"
import { stringify } from "yaml"
import { decodeImageListPullJob, decodeImagePullJob } from "../api/decode.ts"
import { escapeForeignText } from "../api/goQuote.ts"
import { allowlistEntry } from "../api/kubeletImageVerification.ts"
import type { KubeObject } from "../kube/KubeApi.ts"

/** One job as the command names it: its kind and name, its images, and whether it names pull secrets. */
export interface JobImages {
  readonly job: string
  readonly images: ReadonlyArray<string>
  readonly pullSecrets: boolean
}

/** A job that could not be read, and why: said in a comment, its images left out. */
export interface SkippedJob {
  readonly job: string
  readonly reason: string
}

/** What ImagePullJobs and ImageListPullJobs ask to pull, or why one cannot be read. */
export const jobImages = (kind: "ImagePullJob" | "ImageListPullJob", object: KubeObject): Result.Result<JobImages, SkippedJob> => {
  const job = `${kind} ${object.metadata.name ?? ""}`
  if (kind === "ImagePullJob") {
    const decoded = decodeImagePullJob(object)
    if (Result.isFailure(decoded)) return Result.fail({ job, reason: decoded.failure.message })
    const { image, pullSecrets } = decoded.success.spec
    return Result.succeed({ job, images: [image], pullSecrets: (pullSecrets ?? []).length > 0 })
  }
  const decoded = decodeImageListPullJob(object)
  if (Result.isFailure(decoded)) return Result.fail({ job, reason: decoded.failure.message })
  const { images, pullSecrets } = decoded.success.spec
  return Result.succeed({ job, images, pullSecrets: (pullSecrets ?? []).length > 0 })
}

export interface AllowlistEntry {
  /** The repository's full name, as the kubelet compares it: `docker.io/library/nginx`. */
  readonly entry: string
  /** The jobs asking for it. */
  readonly jobs: ReadonlyArray<string>
  /** Some of those jobs name pull secrets: allowlisted, any pod on the node starts it without credentials. */
  readonly pullSecrets: boolean
}

/**
 * One entry per repository, sorted: its full normalised name, exact (no wildcard), which the
 * kubelet takes (api/kubeletImageVerification.ts allowlistPattern) and which matches every tag
 * and digest of it, however a pod spells the image (`nginx:1.25`, `docker.io/library/nginx@sha256:...`).
 */
export const allowlistEntries = (jobs: ReadonlyArray<JobImages>): ReadonlyArray<AllowlistEntry> => {
  const byEntry = new Map<string, { jobs: Set<string>; pullSecrets: boolean }>()
  for (const job of jobs) {
    for (const image of job.images) {
      // The decoders checked every image already.
      const entry = allowlistEntry(image)
      if (Result.isFailure(entry)) continue
      let found = byEntry.get(entry.success)
      if (found === undefined) byEntry.set(entry.success, (found = { jobs: new Set(), pullSecrets: false }))
      found.jobs.add(job.job)
      found.pullSecrets ||= job.pullSecrets
    }
  }
  return [...byEntry]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([entry, found]) => ({ entry, jobs: [...found.jobs].sort(), pullSecrets: found.pullSecrets }))
}

/** Jobs named in one entry's comment; the rest are counted. */
const jobsNamed = 3

const comment = (entry: AllowlistEntry): string => {
  const named = entry.jobs.slice(0, jobsNamed).join(", ")
  const more = entry.jobs.length - jobsNamed
  const jobs = more > 0 ? `${named} and ${more} more` : named
  return entry.pullSecrets ? `${jobs}; has pull secrets: any pod on the node can then start it without credentials` : jobs
}

/**
 * The part of a KubeletConfiguration to merge into the kubelet's configuration file (or a drop-in
 * file of its --config-dir), with a comment per entry naming its jobs; YAML, ready to paste.
 */
export const renderAllowlist = (namespace: string, entries: ReadonlyArray<AllowlistEntry>, skipped: ReadonlyArray<SkippedJob>): string => {
  const lines = [
    `# preloadedImagesVerificationAllowlist for the images of preheat's jobs in namespace ${namespace}.`,
    "# With NeverVerifyAllowlistedImages the kubelet lets pods start these images, which it did not pull itself,",
    "# without checking their credentials with the registry; every other image it did not pull is checked.",
    "# Merge into the kubelet's configuration (KubeletConfiguration, kubelet.config.k8s.io/v1beta1); it reads it when it starts.",
    // A decoder's message quotes what users wrote: escaped, on one line.
    ...skipped.map((s) => `# left out: ${s.job}: ${escapeForeignText(s.reason)}`),
    ...(entries.length === 0 ? ["# no images: with this list the kubelet checks every image it did not pull"] : [])
  ]
  const document = stringify({
    imagePullCredentialsVerificationPolicy: "NeverVerifyAllowlistedImages",
    preloadedImagesVerificationAllowlist: entries.map((e) => e.entry)
  }).trimEnd()
  // Comments go on the entry lines: stringify writes them one to a line, in order, as `- name`.
  let i = 0
  const body = document
    .split("\n")
    .map((line) => (line.startsWith("  - ") || line.startsWith("- ") ? `${line} # ${comment(entries[i++]!)}` : line))
  return `${[...lines, ...body].join("\n")}\n`
}
