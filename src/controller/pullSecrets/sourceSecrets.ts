import { Deferred, Effect, Result } from "effect"
import { type InvalidPullSecret, parsePullSecret } from "../../cri/dockerConfig.ts"
import { KubeApi } from "../../kube/KubeApi.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { keyOf, splitKey } from "../../kube/objectKey.ts"
import { resources } from "../../kube/resources.ts"
import { isPullSecretType } from "./copies.ts"

/**
 * The Secrets that unfinished jobs name as pull secrets, and only those: each is read with a GET
 * the first time a job needs it and polled with a GET every resync (controller.ts), so an edit
 * reaches the copies within that interval. The controller neither lists nor watches Secrets
 * outside its copies' namespace, so a cluster's other Secrets are neither held in its memory nor
 * readable by its RBAC beyond `get`: a watch by name (fieldSelector metadata.name) is authorised
 * as `list`/`watch` of that name, which a static ClusterRole can only grant for every Secret.
 */
export interface SourceSecretBook {
  /** The secret (undefined: it does not exist), read from the API server the first time it is asked for. */
  readonly read: (namespace: string, name: string) => Effect.Effect<KubeObject | undefined, unknown, KubeApi>
  /** Whether `read` has answered for the key (and it was not forgotten since). */
  readonly has: (namespace: string, name: string) => boolean
  /**
   * Why the secret as last read is no usable docker config (not JSON, no `auths`, a bad `auth`,
   * an empty registry key...): judged once per version read. Undefined when it is usable, absent,
   * or not of a pull-secret type (reported apart: copies.ts secretProblem).
   */
  readonly invalid: (namespace: string, name: string) => InvalidPullSecret | undefined
  /** The secret as last read when it can be copied for the daemons: of a pull-secret type and a usable docker config. */
  readonly usable: (namespace: string, name: string) => KubeObject | undefined
  /** Forgets every secret not in `keys` (namespace/name): no unfinished job references it any more. */
  readonly retain: (keys: ReadonlySet<string>) => void
  /** Reads every held secret again: the keys of those that changed, appeared or went. */
  readonly resync: Effect.Effect<Resynced, never, KubeApi>
}

export interface Resynced {
  readonly changed: ReadonlyArray<string>
  /** Of those, the ones that were usable and are not any more (gone, another type, no usable docker config). */
  readonly withdrawn: ReadonlyArray<string>
}

interface Held {
  readonly secret: KubeObject | undefined
  readonly invalid: InvalidPullSecret | undefined
}

const isUsable = (held: Held | undefined): boolean =>
  held?.secret !== undefined && held.invalid === undefined && isPullSecretType(held.secret["type"])

const judged = (secret: KubeObject | undefined): Held => {
  if (secret === undefined || !isPullSecretType(secret["type"])) return { secret, invalid: undefined }
  const parsed = parsePullSecret(secret)
  return { secret, invalid: Result.isFailure(parsed) ? parsed.failure : undefined }
}

const fetchSecret = (key: string) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return yield* api.get(resources.secret, splitKey(key)).pipe(
      Effect.map((secret): KubeObject | undefined => secret),
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
  })

type Fetched = Deferred.Deferred<KubeObject | undefined, unknown>

/**
 * The pull-secrets reconciler's book of source secrets (it retains what jobs still reference), read
 * also by the job and NodeImage reconcilers and the resync: one per controller.
 */
export const makeSourceSecrets = (): SourceSecretBook => {
  const held = new Map<string, Held>()
  const entry = (namespace: string, name: string) => held.get(keyOf(namespace, name))
  // One GET of a secret at a time, shared by whoever asks meanwhile (the job and copy reconcilers,
  // several job workers, the resync): a GET the server throttled waits for its Retry-After, and a
  // second GET of the same secret in that time would be the early retry the server asked not to get.
  const inFlight = new Map<string, Fetched>()
  const fetchShared = (key: string): Effect.Effect<KubeObject | undefined, unknown, KubeApi> =>
    Effect.suspend(() => {
      const running = inFlight.get(key)
      if (running !== undefined) return Deferred.await(running)
      const fetched: Fetched = Deferred.makeUnsafe()
      inFlight.set(key, fetched)
      return fetchSecret(key).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            inFlight.delete(key)
            Deferred.doneUnsafe(fetched, exit)
          })
        )
      )
    })
  return {
    read: (namespace, name) =>
      Effect.suspend(() => {
        const key = keyOf(namespace, name)
        const found = held.get(key)
        if (found !== undefined) return Effect.succeed(found.secret)
        return Effect.tap(fetchShared(key), (secret) => Effect.sync(() => held.set(key, judged(secret))))
      }),
    has: (namespace, name) => held.has(keyOf(namespace, name)),
    invalid: (namespace, name) => entry(namespace, name)?.invalid,
    usable: (namespace, name) => {
      const found = entry(namespace, name)
      return isUsable(found) ? found?.secret : undefined
    },
    retain: (keys) => {
      for (const key of [...held.keys()]) if (!keys.has(key)) held.delete(key)
    },
    resync: Effect.suspend(() =>
      Effect.forEach(
        [...held.keys()],
        (key) =>
          fetchShared(key).pipe(
            Effect.map((secret): ReadonlyArray<{ readonly key: string; readonly withdrawn: boolean }> => {
              const before = held.get(key)
              // A key forgotten meanwhile stays forgotten.
              if (before === undefined) return []
              const same =
                before.secret?.metadata.resourceVersion === secret?.metadata.resourceVersion &&
                (before.secret === undefined) === (secret === undefined)
              if (same) return []
              const after = judged(secret)
              held.set(key, after)
              return [{ key, withdrawn: isUsable(before) && !isUsable(after) }]
            }),
            // Unreadable now (the API server away, say): what was read last stands until the next resync.
            Effect.catch(() => Effect.succeed([]))
          ),
        { concurrency: 4 }
      ).pipe(
        Effect.map((results) => {
          const all = results.flat()
          return { changed: all.map((r) => r.key), withdrawn: all.filter((r) => r.withdrawn).map((r) => r.key) }
        })
      )
    )
  }
}
