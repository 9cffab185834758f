import { isPlainObject, setOwn } from "../kube/frozenJson.ts"

/** RFC 7386: objects merge key by key, null deletes, anything else replaces. Shares `target`'s subtrees. */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isPlainObject(patch)) return patch
  const base = isPlainObject(target) ? target : {}
  const out: Record<string, unknown> = { ...base }
  for (const key of Object.keys(patch)) {
    const value = patch[key]
    if (value === undefined) continue
    if (value === null) delete out[key]
    else setOwn(out, key, mergePatch(Object.hasOwn(base, key) ? base[key] : undefined, value))
  }
  return out
}
