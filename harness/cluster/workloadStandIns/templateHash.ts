// The name of a pod template, as kube-controller-manager makes it: FNV-32a over the template,
// the 32-bit sum printed in decimal and each digit mapped into the "safe" alphabet of
// k8s.io/apimachinery's rand.SafeEncodeString (no vowels, no 0/1/3, so no words and no
// look-alikes). Kubernetes feeds the hash with a dump of the Go struct; here it is the template's
// canonical JSON (keys sorted), so the names differ from a real cluster's but follow its rules:
// deterministic, the same template always gives the same name, any change gives another.
import { isPlainObject } from "../../../src/json/plainObject.ts"

const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text`. */
export const fnv32a = (text: string): number => {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash >>> 0
}

/** rand.SafeEncodeString: every character becomes alphabet[code % 27]. */
export const safeEncode = (text: string): string => [...text].map((c) => safeAlphabet[c.codePointAt(0)! % safeAlphabet.length]).join("")

/** JSON with object keys sorted at every level, so equal values print equally. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * The value without nulls, empty objects and empty lists, which mean "not set" as much as an
 * absent field does: kube hashes Go structs, where they are all the zero value, and kubectl
 * (rollout undo) writes a template back with `creationTimestamp: null` that must hash as before.
 */
const withoutUnset = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    const items = value.map(withoutUnset).filter((v) => v !== undefined)
    return items.length === 0 ? undefined : items
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value)
      .map(([k, v]) => [k, withoutUnset(v)] as const)
      .filter(([, v]) => v !== undefined)
    return entries.length === 0 ? undefined : Object.fromEntries(entries)
  }
  return value === null ? undefined : value
}

/** The `pod-template-hash` / `controller-revision-hash` of a pod template. */
export const templateHash = (template: unknown): string => safeEncode(String(fnv32a(canonicalJson(withoutUnset(template) ?? {}))))
