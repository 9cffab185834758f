import { Effect } from "effect"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { keyOf, splitKey } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"

/**
 * The Secrets that jobs name as pull secrets, and only those: each is read with a GET the first
 * time a job needs it and re-read on every resync. The controller neither lists nor watches
 * Secrets outside its copies' namespace, so a cluster's other Secrets are neither held in its
 * memory nor readable by its RBAC beyond `get`.
 */
export interface SourceSecrets {
  /** The secret (undefined: it does not exist), read from the API server the first time it is asked for. */
  readonly read: (namespace: string, name: string) => Effect.Effect<KubeObject | undefined, unknown, KubeApi>
  /** The secret as last read; only for keys `read` has answered. */
  readonly cached: (namespace: string, name: string) => KubeObject | undefined
  /** Forgets every secret not in `keys` (namespace/name): no job references it any more. */
  readonly retain: (keys: ReadonlySet<string>) => void
  /** Reads every held secret again; the keys of those that changed, appeared or went. */
  readonly resync: Effect.Effect<ReadonlyArray<string>, never, KubeApi>
  readonly size: () => number
}

const fetchSecret = (key: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return yield* api.get(resources.secret, splitKey(key)).pipe(
      Effect.map((secret): KubeObject | undefined => secret),
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
  })

export const makeSourceSecrets = (): SourceSecrets => {
  const held = new Map<string, { readonly secret: KubeObject | undefined }>()
  return {
    read: (namespace, name) =>
      Effect.suspend(() => {
        const key = keyOf(namespace, name)
        const entry = held.get(key)
        if (entry !== undefined) return Effect.succeed(entry.secret)
        return Effect.tap(fetchSecret(key), (secret) => Effect.sync(() => held.set(key, { secret })))
      }),
    cached: (namespace, name) => held.get(keyOf(namespace, name))?.secret,
    retain: (keys) => {
      for (const key of [...held.keys()]) if (!keys.has(key)) held.delete(key)
    },
    resync: Effect.suspend(() =>
      Effect.forEach(
        [...held.keys()],
        (key) =>
          fetchSecret(key).pipe(
            Effect.map((secret) => {
              const before = held.get(key)
              // A key forgotten meanwhile stays forgotten.
              if (before === undefined) return []
              held.set(key, { secret })
              return before.secret?.metadata.resourceVersion === secret?.metadata.resourceVersion &&
                (before.secret === undefined) === (secret === undefined)
                ? []
                : [key]
            }),
            // Unreadable now (the API server away, say): what was read last stands until the next resync.
            Effect.catch(() => Effect.succeed([]))
          ),
        { concurrency: 4 }
      ).pipe(Effect.map((changed) => changed.flat()))
    ),
    size: () => held.size
  }
}
