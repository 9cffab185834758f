// What the NodeImage reconciler remembers between reconciles.
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
  /**
   * Whether the node's NodeImage spec (what its unreadable parts follow from) is another object
   * than at the last call, remembering it: the store keeps an unchanged spec the same object, so
   * the daemons' status reports need not have their spec read again.
   */
  readonly specChanged: (name: string, spec: unknown) => boolean
}

/** The NodeImage reconciler's books, one set per controller. */
export const makeNodeImageBooks = (): NodeImageBooks => {
  const said = new Map<string, string>()
  const specs = new Map<string, unknown>()
  return {
    parseTime: rememberedTimes(),
    unreadableNews: (name, message) => {
      if (message === said.get(name)) return false
      if (message === undefined) said.delete(name)
      else said.set(name, message)
      return message !== undefined
    },
    specChanged: (name, spec) => {
      if (specs.has(name) && specs.get(name) === spec) return false
      if (spec === undefined) specs.delete(name)
      else specs.set(name, spec)
      return true
    }
  }
}
