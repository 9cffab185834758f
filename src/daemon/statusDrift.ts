import { isDeepStrictEqual } from "node:util"
import { isPlainObject } from "../json/plainObject.ts"
import { mergePatchBetween } from "../json/mergePatch.ts"

/** Whether every value `patch` sets is set to the same by `sent` (objects key by key, anything else whole). */
const within = (patch: unknown, sent: unknown): boolean => {
  if (!isPlainObject(patch) || !isPlainObject(sent)) return isDeepStrictEqual(patch, sent)
  return Object.keys(patch).every((key) => Object.hasOwn(sent, key) && within(patch[key], sent[key]))
}

/**
 * Whether the status a status patch left on the server (`answer`) shows another writer's change,
 * against `expected`, the status the patch `sent` was computed to make. What would take the
 * answer back to `expected` is what differs; when that is only parts of `sent` itself, the server
 * did not keep them (a field an older CRD prunes) and writing them again would change nothing, so
 * only a difference outside what was sent counts (the controller failing a silent daemon's tag
 * in between, a person's edit).
 */
export const othersChangedStatus = (answer: unknown, expected: unknown, sent: unknown): boolean => {
  const undone = mergePatchBetween(answer ?? {}, expected)
  return undone !== undefined && !within(undone, sent)
}
