// What the NodeImage reconciler remembers between reconciles.
import { Context, Layer } from "effect"
import { rememberedTimes } from "./tagTimes.ts"
import type { ParseTime } from "./tagTimes.ts"

export interface NodeImageBooks {
  /** Tag times as the NodeImage decisions read them, parsed once for all nodes (tagTimes.ts). */
  readonly parseTime: ParseTime
  /**
   * Whether `message` (why parts of the NodeImage cannot be read; undefined: none) is news for the
   * node, remembering it: each is said once per change, so a re-reconcile is silent.
   */
  readonly unreadableNews: (name: string, message: string | undefined) => boolean
}

export const makeNodeImageBooks = (): NodeImageBooks => {
  const said = new Map<string, string>()
  return {
    parseTime: rememberedTimes(),
    unreadableNews: (name, message) => {
      if (message === said.get(name)) return false
      if (message === undefined) said.delete(name)
      else said.set(name, message)
      return message !== undefined
    }
  }
}

/** The NodeImage reconciler's books, one set per controller. */
export class NodeImageState extends Context.Service<NodeImageState, NodeImageBooks>()("preheat/controller/nodeImage/NodeImageState") {
  static readonly layer: Layer.Layer<NodeImageState> = Layer.sync(NodeImageState, makeNodeImageBooks)
}
