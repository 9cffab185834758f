import type { ImageDigestCount } from "../../api/imagePullJob.ts"
import { PositionLists } from "./positionLists.ts"

/** One digest the job's image resolved to: on how many nodes, and the first few of them. */
export interface DigestNodes {
  readonly digest: string
  readonly nodes: number
  readonly examples: ReadonlyArray<string>
}

/** The nodes named for each digest: enough to go and look, bounded whatever the job's size. */
const examplesPerDigest = 3

/**
 * The digests a job's succeeded nodes resolved its image to, kept up to date one node at a time
 * (nodes by their position among the job's targets), so that the count costs what changed: a
 * walk over 2,000 targets per reconcile is what JobProgress exists to avoid. A node's examples
 * are the first to have reported that digest, which keeps the condition's message steady while
 * more nodes report.
 */
export class DigestTally {
  private readonly byDigest: PositionLists<string>

  /** `targets`: how many positions there are. */
  constructor(targets: number) {
    this.byDigest = new PositionLists(targets)
  }

  add(digest: string, node: number): void {
    this.byDigest.add(digest, node)
  }

  remove(digest: string, node: number): void {
    this.byDigest.remove(digest, node)
  }

  /** Each digest with its count and first nodes, most nodes first (then by digest). */
  summary(nameOf: (node: number) => string): ReadonlyArray<DigestNodes> {
    const digests: Array<DigestNodes> = []
    for (const digest of this.byDigest.keys()) {
      const examples: Array<string> = []
      for (const node of this.byDigest.positions(digest)) {
        if (examples.length === examplesPerDigest) break
        examples.push(nameOf(node))
      }
      digests.push({ digest, nodes: this.byDigest.size(digest), examples })
    }
    return digests.sort((a, b) => b.nodes - a.nodes || (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0))
  }
}

/** status.imageDigests: absent while no node reported a digest. */
export const imageDigestsOf = (digests: ReadonlyArray<DigestNodes>): ReadonlyArray<ImageDigestCount> | undefined =>
  digests.length === 0 ? undefined : digests.map(({ digest, nodes }) => ({ digest, nodes }))
