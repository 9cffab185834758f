// A controller deletes the object it decided about, not whatever holds the name by the time the
// request arrives: another writer (or the controller itself, a moment later) may have re-created
// it, and the new object is not the one the decision was about.
import { Effect } from "effect"
import type { Unavailable } from "./errors.ts"
import { KubeApi } from "./KubeApi.ts"
import type { KubeObject, ObjectKey, Refused } from "./KubeApi.ts"
import type { Resource } from "./resources.ts"

/**
 * Deletes `object` (by its name, guarded by its uid). NotFound, or a Conflict on the uid (the
 * name now holds another object), both mean the object is gone already.
 */
export const deleteExact = (resource: Resource, object: KubeObject): Effect.Effect<void, Refused | Unavailable, KubeApi> =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const { name = "", namespace, uid } = object.metadata
    const key: ObjectKey = namespace === undefined ? { name } : { name, namespace }
    yield* api
      .delete(resource, key, uid === undefined ? {} : { uid })
      .pipe(Effect.catchTags({ NotFound: () => Effect.void, Conflict: () => Effect.void }))
  })
