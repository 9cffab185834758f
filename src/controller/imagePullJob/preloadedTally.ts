import type { PreloadedVerdict } from "../../api/kubeletImageVerification.ts"

/** Succeeded nodes whose kubelets treat the image one way: how many, the first few, and the settings that decide it. */
export interface PreloadedNodes {
  readonly nodes: number
  readonly examples: ReadonlyArray<string>
  /** The policies behind it, sorted: `NeverVerifyPreloadedImages`, `NeverVerifyAllowlistedImages (not allowlisted)`. */
  readonly whys: ReadonlyArray<string>
}

/** What the job's succeeded nodes' kubelets do with its image (api/kubeletImageVerification.ts preloadedVerdict). */
export interface PreloadedSummary {
  /** Nodes where any pod can start it without credentials. */
  readonly unverified: PreloadedNodes | undefined
  /** Nodes where a pod starting it checks its credentials with the registry first. */
  readonly reverified: PreloadedNodes | undefined
  /** Succeeded nodes whose pull presented credentials. */
  readonly authenticated: number
}

export const noPreloaded: PreloadedSummary = { unverified: undefined, reverified: undefined, authenticated: 0 }

/** The nodes named in one message: enough to go and look, bounded whatever the job's size. */
const examplesPerGroup = 3

class Group {
  /** Nodes (by position among the job's targets) in the order they came: the first stay the examples. */
  readonly nodes = new Set<number>()
  readonly whys = new Map<string, number>()

  add(node: number, why: string): void {
    this.nodes.add(node)
    this.whys.set(why, (this.whys.get(why) ?? 0) + 1)
  }

  remove(node: number, why: string): void {
    if (!this.nodes.delete(node)) return
    const left = (this.whys.get(why) ?? 1) - 1
    if (left === 0) this.whys.delete(why)
    else this.whys.set(why, left)
  }

  summary(nameOf: (node: number) => string): PreloadedNodes | undefined {
    if (this.nodes.size === 0) return undefined
    const examples: Array<string> = []
    for (const node of this.nodes) {
      if (examples.length === examplesPerGroup) break
      examples.push(nameOf(node))
    }
    return { nodes: this.nodes.size, examples, whys: [...this.whys.keys()].sort() }
  }
}

/**
 * The job's succeeded nodes by what their kubelets do with its image, kept up to date one node at
 * a time as DigestTally is, so that it costs what changed.
 */
export class PreloadedTally {
  private readonly unverified = new Group()
  private readonly reverified = new Group()
  private authenticated = 0

  add(node: number, verdict: PreloadedVerdict, authenticated: boolean): void {
    if (verdict.access === "unverified") this.unverified.add(node, verdict.why)
    else if (verdict.access === "reverified") this.reverified.add(node, verdict.why)
    if (authenticated) this.authenticated++
  }

  remove(node: number, verdict: PreloadedVerdict, authenticated: boolean): void {
    if (verdict.access === "unverified") this.unverified.remove(node, verdict.why)
    else if (verdict.access === "reverified") this.reverified.remove(node, verdict.why)
    if (authenticated) this.authenticated--
  }

  summary(nameOf: (node: number) => string): PreloadedSummary {
    return {
      unverified: this.unverified.summary(nameOf),
      reverified: this.reverified.summary(nameOf),
      authenticated: this.authenticated
    }
  }
}
