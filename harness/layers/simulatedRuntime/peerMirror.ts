// A peer-to-peer registry mirror shared by the simulated nodes of one cluster (`preheat dev --p2p`),
// as Spegel or a similar mirror works: a node pulls each layer of an image from a peer that holds it
// whole already, at the peers' speed, else from the registry at the registry's, and its completed
// layers are then offered to the others. Nothing is served from a layer another node is still
// downloading, so nodes that start one image together all go to the registry (Spegel's own
// documentation calls it a known weakness: spegel-org/spegel#600, its benchmark write-up). The
// registry counts the bytes it served, per image, to measure what seeding saves.

/** One layer of a simulated image: made up from the image's id, so every node agrees on it. */
export interface SimulatedLayer {
  readonly digest: string
  readonly size: number
}

/** Where a layer came from in one pull. */
export type LayerSource = "registry" | "peer" | "local"

/** What the registry and the peers served for one image (normalised `name:tag`, or `name@digest`). */
export interface ImageServed {
  readonly image: string
  readonly registryBytes: number
  readonly peerBytes: number
  /** Pulls that fetched something (a pull of an image the node holds whole fetches nothing). */
  readonly pulls: number
  /** Those of them that ended (any outcome): as many as `pulls` once none is under way. */
  readonly ended: number
  /** Clock millis of the first pull's start and the last pull's end: the image's makespan in simulated time. */
  readonly firstStart: number | undefined
  readonly lastEnd: number | undefined
}

export interface MirrorTotals {
  readonly registryBytes: number
  readonly peerBytes: number
  readonly images: ReadonlyArray<ImageServed>
}

export interface PeerMirrorOptions {
  /** A node's link to the registry. */
  readonly registryBytesPerSecond: number
  /** A node's link to a peer. */
  readonly peerBytesPerSecond: number
}

interface Counts {
  registryBytes: number
  peerBytes: number
  pulls: number
  ended: number
  firstStart: number | undefined
  lastEnd: number | undefined
}

/** The mirror: who holds which layer, and what was served. One per simulated cluster, used by every node's runtime. */
export class PeerMirror {
  readonly registryBytesPerSecond: number
  readonly peerBytesPerSecond: number
  private readonly holders = new Map<string, Set<string>>()
  private readonly served = new Map<string, Counts>()
  private totals = { registryBytes: 0, peerBytes: 0 }
  /** Bumped at every count: a reader tells a change without comparing totals. */
  private revision = 0

  constructor(options: PeerMirrorOptions) {
    this.registryBytesPerSecond = options.registryBytesPerSecond
    this.peerBytesPerSecond = options.peerBytesPerSecond
  }

  /** Where `node` gets a layer from now: itself, a peer holding it whole, or the registry. */
  sourceOf(node: string, digest: string): LayerSource {
    const holders = this.holders.get(digest)
    if (holders === undefined) return "registry"
    if (holders.has(node)) return "local"
    return holders.size > 0 ? "peer" : "registry"
  }

  bytesPerSecond(source: Exclude<LayerSource, "local">): number {
    return source === "peer" ? this.peerBytesPerSecond : this.registryBytesPerSecond
  }

  /** `node` holds these layers whole: offered to the others from now on. */
  hold(node: string, digests: Iterable<string>): void {
    for (const digest of digests) {
      let holders = this.holders.get(digest)
      if (holders === undefined) this.holders.set(digest, (holders = new Set()))
      holders.add(node)
    }
  }

  /** `node` no longer holds these layers (its image removed). */
  drop(node: string, digests: Iterable<string>): void {
    for (const digest of digests) {
      const holders = this.holders.get(digest)
      holders?.delete(node)
      if (holders?.size === 0) this.holders.delete(digest)
    }
  }

  /** The node left the cluster: it serves nothing any more. */
  leave(node: string): void {
    for (const [digest, holders] of this.holders) {
      holders.delete(node)
      if (holders.size === 0) this.holders.delete(digest)
    }
  }

  private countsOf(image: string): Counts {
    let counts = this.served.get(image)
    if (counts === undefined) {
      counts = { registryBytes: 0, peerBytes: 0, pulls: 0, ended: 0, firstStart: undefined, lastEnd: undefined }
      this.served.set(image, counts)
    }
    return counts
  }

  /** A pull of `image` that fetches something started at `at`. */
  pullStarted(image: string, at: number): void {
    const counts = this.countsOf(image)
    counts.pulls++
    counts.firstStart = Math.min(counts.firstStart ?? at, at)
    this.revision++
  }

  /** A pull of `image` that fetched something ended (any outcome) at `at`. */
  pullEnded(image: string, at: number): void {
    const counts = this.countsOf(image)
    counts.ended++
    counts.lastEnd = Math.max(counts.lastEnd ?? at, at)
    this.revision++
  }

  /** Bytes of `image` sent to a node by the registry or a peer. */
  count(image: string, source: Exclude<LayerSource, "local">, bytes: number): void {
    const counts = this.countsOf(image)
    if (source === "registry") {
      counts.registryBytes += bytes
      this.totals.registryBytes += bytes
    } else {
      counts.peerBytes += bytes
      this.totals.peerBytes += bytes
    }
    this.revision++
  }

  /** The bytes the registry and the peers served so far, all images together. */
  get bytesServed(): { readonly registryBytes: number; readonly peerBytes: number } {
    return { ...this.totals }
  }

  /** A number that moves with every count: unchanged, nothing new was served. */
  get changes(): number {
    return this.revision
  }

  /** What was served so far, the images by name. */
  snapshot(): MirrorTotals {
    const images = [...this.served]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([image, counts]): ImageServed => ({ image, ...counts }))
    return { ...this.totals, images }
  }
}

const mebibyte = 1024 * 1024

/**
 * The layers of a made-up image: one per 128 MiB begun (at most 8, the last one holding the rest),
 * so `preheat dev`'s 20-250 MiB images have one or two and a 1 GiB image eight; their digests come
 * from the image's id, so the nodes pulling one image agree on its layers.
 */
export const simulatedLayers = (imageId: string, size: number, digestOf: (text: string) => string): ReadonlyArray<SimulatedLayer> => {
  const count = Math.min(8, Math.max(1, Math.ceil(size / (128 * mebibyte))))
  const each = Math.floor(size / count)
  return Array.from({ length: count }, (_, i) => ({
    digest: digestOf(`layer:${imageId}:${i}`),
    size: i === count - 1 ? size - each * (count - 1) : each
  }))
}
