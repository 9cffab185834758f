// kube-apiserver's JSON decoder (Go's encoding/json scanner) refuses documents nested deeper than
// 10000 levels with "exceeded max depth". V8's JSON.parse takes any depth, but the recursive walks
// after it (pruning, defaulting, validation) would overflow the stack, so the body is measured first.

/** Go's encoding/json maxNestingDepth. */
const maxJsonDepth = 10_000

/** Whether the JSON text opens more than `limit` arrays/objects at once; strings are skipped. One linear pass. */
export const exceedsJsonDepth = (text: string, limit = maxJsonDepth): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}
