// eraser's exclusion list (issue 39): the images Never jobs keep warm, in the forms eraser compares,
// and what to write for them. What eraser does, from eraser-dev/eraser @ 20576a24c512feb83c26ed867353d4143717d798:
// - its manager lists the ConfigMaps of its own namespace (POD_NAMESPACE, default eraser-system)
//   labelled eraser.sh/exclude.list=true when it starts a collector or remover job, and mounts each
//   into the job's pods (controllers/util/util.go GetExclusionVolume, pkg/utils/pod_info.go);
// - a pod reads, of each, the first file whose name ends in `.json`, in name order, as
//   `{"excluded": [...]}` (pkg/utils/utils.go ParseExcluded, readConfigMap);
// - an image is excluded when an entry equals its image id, one of its repo tags as the runtime
//   reports them (`docker.io/library/nginx:1.25`, never `nginx:1.25`) or one of its repo digests'
//   bare digests (`sha256:...`, the part after `@`); or when an entry ending in `/*` or `:*` is a
//   prefix of one of them (pkg/utils/utils.go IsExcluded, ProcessRepoDigests).
import { Result } from "effect"
import { formatImageReference, parseImageReference } from "../../api/imageReference.ts"
import type { ImagePullJob } from "../../api/imagePullJob.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { Stored } from "../../kube/store.ts"
import type { Decoded } from "../stores.ts"

/** The label eraser finds its exclusion lists by (controllers/util/util.go exclusionLabel). */
const exclusionLabelKey = "eraser.sh/exclude.list"
const managedByKey = "app.kubernetes.io/managed-by"
/** The one ConfigMap the controller keeps; it never touches another. */
export const exclusionListName = "preheat-excluded-images"
/** A `.json` file name: eraser reads no other (readConfigMap). */
export const exclusionDataKey = "excluded.json"
/**
 * What a ConfigMap's data may hold at most, summed over its values (kube-apiserver's
 * ValidateConfigMap: core.MaxSecretSize, 1 MiB).
 */
const maxConfigMapDataBytes = 1024 * 1024

/**
 * The job, when its image is one preheat keeps warm: a Never job (an ImageListPullJob's children
 * included; an AdvancedCronJob's runs are Always), valid, and not being deleted. A paused job
 * counts: its image stays wanted on the nodes it was pulled on.
 */
export const keepsWarm = (stored: Stored<Decoded<ImagePullJob>> | undefined): ImagePullJob | undefined => {
  if (stored === undefined || stored.raw.metadata.deletionTimestamp !== undefined || Result.isFailure(stored.view)) return undefined
  const job = stored.view.success
  if (job.spec.completionPolicy.type !== "Never") return undefined
  if (job.status?.conditions?.some((c) => c.type === "Valid" && c.status === "False") === true) return undefined
  return job
}

/** A manifest digest as eraser compares it: well formed (so ASCII), bare. */
const isDigest = (digest: string): boolean => Result.isSuccess(parseImageReference(`x@${digest}`))

/**
 * The entries that keep one job's image from eraser: for a tag reference, the repo tag as the
 * runtime reports it (normalised, `latest` when none is given); for a digest reference, the digest
 * (a runtime pulling by digest records no tag); and every digest the job's nodes resolved the image
 * to (status.imageDigests), so the image stays excluded by its content too, as eraser also matches.
 */
export const exclusionEntries = (job: ImagePullJob): ReadonlyArray<string> => {
  const parsed = parseImageReference(job.spec.image)
  if (Result.isFailure(parsed)) return []
  const { digest, domain, path, tag } = parsed.success
  const named = digest ?? formatImageReference({ domain, path, tag: tag ?? "latest" })
  const resolved = (job.status?.imageDigests ?? []).map((d) => d.digest).filter(isDigest)
  return [named, ...resolved]
}

/** Every job's entries, deduplicated and sorted (so that the same jobs always write the same text). */
export const excludedImages = (jobs: Iterable<ImagePullJob>): ReadonlyArray<string> => {
  const entries = new Set<string>()
  for (const job of jobs) for (const entry of exclusionEntries(job)) entries.add(entry)
  return [...entries].sort()
}

/** The list's text, one entry a line, and the entries that did not fit in a ConfigMap. */
export const exclusionText = (
  entries: ReadonlyArray<string>,
  maxBytes = maxConfigMapDataBytes
): { readonly text: string; readonly left: ReadonlyArray<string> } => {
  const render = (list: ReadonlyArray<string>) => `${JSON.stringify({ excluded: list }, null, 2)}\n`
  const text = render(entries)
  if (text.length <= maxBytes) return { text, left: [] }
  // The most entries, in order, whose text fits (entries are ASCII, isDigest and the reference
  // grammar: length is size); a search, as a list this long is rare and each try is one render.
  let fit = 0
  let over = entries.length
  while (over - fit > 1) {
    const middle = Math.floor((fit + over) / 2)
    if (render(entries.slice(0, middle)).length <= maxBytes) fit = middle
    else over = middle
  }
  return { text: render(entries.slice(0, fit)), left: entries.slice(fit) }
}

export type ExclusionDecision =
  | { readonly action: "none" }
  /** The name is taken by a ConfigMap preheat does not manage: left alone. */
  | { readonly action: "notOurs"; readonly object: KubeObject }
  | { readonly action: "create" | "update"; readonly object: KubeObject; readonly left: ReadonlyArray<string> }
  | { readonly action: "delete"; readonly object: KubeObject }

const labelsOf = (object: KubeObject | undefined) => object?.metadata.labels ?? {}

/**
 * What to do about the ConfigMap `current` (the stored one, if any) so that eraser reads
 * `entries`: created when there are some, deleted when none remain, rewritten only when its text or
 * our labels differ. Its data is ours whole: another `.json` key sorting first would be the file
 * eraser reads instead of ours.
 */
export const decideExclusion = (namespace: string, entries: ReadonlyArray<string>, current: KubeObject | undefined): ExclusionDecision => {
  if (current !== undefined && labelsOf(current)[managedByKey] !== "preheat") return { action: "notOurs", object: current }
  if (entries.length === 0) return current === undefined ? { action: "none" } : { action: "delete", object: current }
  const { left, text } = exclusionText(entries)
  const labels = { ...labelsOf(current), [exclusionLabelKey]: "true", [managedByKey]: "preheat" }
  const data = { [exclusionDataKey]: text }
  if (current === undefined) {
    const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: exclusionListName, namespace, labels }, data }
    return { action: "create", object, left }
  }
  const sameData = JSON.stringify(current["data"] ?? {}) === JSON.stringify(data) && current["binaryData"] === undefined
  if (sameData && labelsOf(current)[exclusionLabelKey] === "true") return { action: "none" }
  const { binaryData: _binary, ...rest } = current
  return { action: "update", object: { ...rest, metadata: { ...current.metadata, labels }, data }, left }
}
