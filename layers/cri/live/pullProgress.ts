import { Predicate } from "effect"

/**
 * Pure parts of byte progress: what an image manifest says must be downloaded, which blob an
 * in-flight ingest writes, and how bytes become a percentage.
 */

export interface BlobRef {
  readonly digest: string
  readonly size: number
}

const isDescriptor = (value: unknown): value is BlobRef =>
  Predicate.hasProperty(value, "digest") &&
  Predicate.isString(value.digest) &&
  Predicate.hasProperty(value, "size") &&
  Predicate.isNumber(value.size)

/**
 * The config and layers of an image manifest (OCI or Docker schema 2), or undefined when the bytes
 * are something else: an index, a config, a layer. An index's chosen manifest is fetched into the
 * same lease, so indexes need no platform logic here.
 */
export const manifestBlobs = (bytes: Uint8Array): ReadonlyArray<BlobRef> | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    return undefined
  }
  if (!Predicate.hasProperty(parsed, "config") || !isDescriptor(parsed.config)) return undefined
  if (!Predicate.hasProperty(parsed, "layers") || !Array.isArray(parsed.layers)) return undefined
  const layers: ReadonlyArray<unknown> = parsed.layers
  if (!layers.every(isDescriptor)) return undefined
  return [parsed.config, ...layers.filter(isDescriptor)].map(({ digest, size }) => ({ digest, size }))
}

/** Union of several manifests' blobs, each digest once (layers shared by two count once). */
export const distinctBlobs = (lists: ReadonlyArray<ReadonlyArray<BlobRef>>): ReadonlyArray<BlobRef> => {
  const byDigest = new Map<string, BlobRef>()
  for (const list of lists) for (const blob of list) byDigest.set(blob.digest, blob)
  return [...byDigest.values()]
}

/**
 * The blob an ingest writes. containerd names ingests `<kind>-<digest>` (`layer-sha256:...`,
 * `config-sha256:...`, sometimes with `name@` before the digest) and leaves `expected` empty.
 */
export const ingestDigest = (ref: string): string | undefined =>
  /(sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$/.exec(ref)?.[1]

/** Bytes of `blobs` already here: whole committed blobs plus the written part of in-flight ones. */
export const bytesDone = (
  blobs: ReadonlyArray<BlobRef>,
  committed: ReadonlySet<string>,
  ingestOffsets: ReadonlyMap<string, number>
): number =>
  blobs.reduce((sum, blob) => sum + (committed.has(blob.digest) ? blob.size : Math.min(blob.size, ingestOffsets.get(blob.digest) ?? 0)), 0)

/**
 * Whether the pull waits on bytes of `blobs`: one of them not committed has an ingest written short
 * of its size. A blob without an ingest is not waited on: containerd has not started it (it fetches
 * a few at a time, and each opens its ingest before asking the registry) or skips it (the layer's
 * snapshot is already there); unpacking, after the last byte, has none.
 */
export const awaitingBlobBytes = (
  blobs: ReadonlyArray<BlobRef>,
  committed: ReadonlySet<string>,
  ingestOffsets: ReadonlyMap<string, number>
): boolean => blobs.some((blob) => !committed.has(blob.digest) && (ingestOffsets.get(blob.digest) ?? blob.size) < blob.size)

/**
 * Of the manifests of our repository in a pull's lease, the one containerd wrote last: the tag's
 * current one, should it have moved between two attempts made under the same lease.
 */
export const newestManifest = <M extends { readonly createdAt: number }>(manifests: ReadonlyArray<M>): M | undefined =>
  manifests.reduce<M | undefined>((newest, m) => (newest === undefined || m.createdAt > newest.createdAt ? m : newest), undefined)

export const totalBytes = (blobs: ReadonlyArray<BlobRef>): number => blobs.reduce((sum, blob) => sum + blob.size, 0)

/**
 * 0..99 while the pull runs: 100 is kept for the runtime's success, since unpacking still follows
 * the last byte.
 */
export const runningPercent = (done: number, total: number): number =>
  total <= 0 ? 0 : Math.max(0, Math.min(99, Math.floor((done * 100) / total)))

/** Host and repository path of a reference, as containerd writes its distribution-source labels. */
const referenceRepository = (image: string): { readonly host: string; readonly path: string } => {
  const name = image.split("@")[0] ?? image
  const lastSlash = name.lastIndexOf("/")
  const lastColon = name.lastIndexOf(":")
  const withoutTag = lastColon > lastSlash ? name.slice(0, lastColon) : name
  const slash = withoutTag.indexOf("/")
  const first = slash === -1 ? "" : withoutTag.slice(0, slash)
  if (first.includes(".") || first.includes(":") || first === "localhost") {
    return { host: first, path: withoutTag.slice(slash + 1) }
  }
  return { host: "docker.io", path: slash === -1 ? `library/${withoutTag}` : withoutTag }
}

const distributionSource = "containerd.io/distribution.source."

/**
 * Whether a manifest's labels allow it to be the one `image` names. containerd labels fetched
 * blobs with the repositories they came from (`containerd.io/distribution.source.<host>` =
 * `repo[,repo...]`); a blob not yet labelled (the label follows the fetch
 * by a moment) is given the benefit of the doubt.
 */
export const labelsMatch = (labels: Readonly<Record<string, string>>, image: string): boolean => {
  const sources = Object.entries(labels).filter(([key]) => key.startsWith(distributionSource))
  if (sources.length === 0) return true
  const { host, path } = referenceRepository(image)
  // The label key carries the host without its port (`...source.127.0.0.1` for 127.0.0.1:5055).
  const hostname = host.replace(/:\d+$/, "")
  return sources.some(([key, value]) => key.slice(distributionSource.length) === hostname && value.split(",").includes(path))
}
