// `preheat dev`'s registry, moved by kubectl: a ConfigMap whose every entry is a push to a tag.
// `kubectl create configmap simulated-registry --from-literal=push-1=nginx:latest` moves nginx:latest
// to a new image (new id, new manifest digest) in the registry every simulated node pulls from;
// another entry naming it moves it again; with none left, the tag names its first image again.
import { Effect, Result } from "effect"
import type { Scope } from "effect"
import { type ImageReference, parseImageReference } from "../../src/api/imageReference.ts"
import type { KubeApi } from "../../src/kube/KubeApi.ts"
import { reflect } from "../../src/kube/reflector.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeStore } from "../../src/kube/store.ts"
import { watcher } from "../../src/kube/watcher.ts"

const registryConfigMap = { namespace: "default", name: "simulated-registry" } as const

const tagName = (ref: ImageReference): string => `${ref.domain}/${ref.path}:${ref.tag ?? "latest"}`

export interface TagRevisions {
  /** By normalised `name:tag`: the names of the entries that pushed to it, sorted and joined. */
  readonly revisions: ReadonlyMap<string, string>
  /** Entries that name no tag, in words. */
  readonly problems: ReadonlyArray<string>
}

/** Reads the ConfigMap's data: each entry `<push name>: <image:tag>`. */
export const tagRevisions = (data: Readonly<Record<string, unknown>> | undefined): TagRevisions => {
  const pushes = new Map<string, Array<string>>()
  const problems: Array<string> = []
  for (const [push, value] of Object.entries(data ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const parsed = typeof value === "string" ? parseImageReference(value.trim()) : undefined
    if (parsed === undefined || Result.isFailure(parsed)) {
      problems.push(`entry ${push}: ${parsed === undefined ? "not a string" : parsed.failure.message}`)
      continue
    }
    if (parsed.success.digest !== undefined) {
      problems.push(`entry ${push}: ${value} names a digest, which cannot move; name a tag`)
      continue
    }
    const key = tagName(parsed.success)
    pushes.set(key, [...(pushes.get(key) ?? []), push])
  }
  return { revisions: new Map([...pushes].map(([key, names]) => [key, names.join(",")])), problems }
}

/**
 * Follows the ConfigMap for the life of the scope; the function returned gives a tag's current
 * revision, for the simulated runtimes (SimulatedRuntimeConfig.tagRevision).
 */
export const followTagMoves = Effect.fnUntraced(function* (): Effect.fn.Return<
  (reference: ImageReference) => string | undefined,
  never,
  KubeApi | Scope.Scope
> {
  let current: ReadonlyMap<string, string> = new Map()
  const store = makeStore(resources.configMap)
  yield* reflect(store, watcher(resources.configMap, { namespace: registryConfigMap.namespace }), (change) =>
    Effect.gen(function* () {
      const object = change.type === "deleted" ? undefined : change.current.raw
      const name = (change.type === "deleted" ? change.old.raw : change.current.raw).metadata.name
      if (name !== registryConfigMap.name) return
      const { problems, revisions } = tagRevisions(object?.["data"] as Readonly<Record<string, unknown>> | undefined)
      current = revisions
      if (problems.length > 0) {
        yield* Effect.logWarning("simulated registry: entries ignored").pipe(Effect.annotateLogs({ problems: problems.join("; ") }))
      }
      yield* Effect.logInfo("simulated registry: tags moved").pipe(Effect.annotateLogs({ tags: [...revisions.keys()].join(" ") }))
    })
  )
  yield* store.synced
  return (reference) => current.get(tagName(reference))
})
