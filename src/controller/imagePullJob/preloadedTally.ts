import type { PreloadedVerdict } from "../../api/kubeletImageVerification.ts"
import { PositionLists } from "./positionLists.ts"

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

type Access = "unverified" | "reverified"

class Group {
  /** Nodes (by position among the job's targets) in the order they came: the first stay the examples. */
  private readonly nodes: PositionLists<Access>
  private readonly access: Access
  readonly whys = new Map<string, number>()

  constructor(nodes: PositionLists<Access>, access: Access) {
    this.nodes = nodes
    this.access = access
  }

  add(node: number, why: string): void {
    this.nodes.add(this.access, node)
    this.whys.set(why, (this.whys.get(why) ?? 0) + 1)
  }

  remove(node: number, why: string): void {
    if (!this.nodes.remove(this.access, node)) return
    const left = (this.whys.get(why) ?? 1) - 1
    if (left === 0) this.whys.delete(why)
    else this.whys.set(why, left)
  }

  summary(nameOf: (node: number) => string): PreloadedNodes | undefined {
    const size = this.nodes.size(this.access)
    if (size === 0) return undefined
    const examples: Array<string> = []
    for (const node of this.nodes.positions(this.access)) {
      if (examples.length === examplesPerGroup) break
      examples.push(nameOf(node))
    }
    return { nodes: size, examples, whys: [...this.whys.keys()].sort() }
  }
}

/**
 * The job's succeeded nodes by what their kubelets do with its image, kept up to date one node at
 * a time as DigestTally is, so that it costs what changed.
 */
export class PreloadedTally {
  private readonly unverified: Group
  private readonly reverified: Group
  private authenticated = 0

  /** `targets`: how many positions there are. A node is in one group at a time (its kubelet's one verdict). */
  constructor(targets: number) {
    const nodes = new PositionLists<Access>(targets)
    this.unverified = new Group(nodes, "unverified")
    this.reverified = new Group(nodes, "reverified")
  }

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
