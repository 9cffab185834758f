import { Context } from "effect"
import type { Effect } from "effect"
import type { KubeObject, ObjectKey, WriteError } from "./KubeApi.ts"
import type { Resource } from "./resources.ts"

/**
 * A strategic merge patch of a built-in kind, which KubeApi (merge patches only, for the custom
 * kinds the roles write) does not send: it merges a template's containers by name, as
 * `kubectl set image` does. Live body: layers/kube/live/strategicPatchLive.ts.
 */
export class StrategicPatch extends Context.Service<
  StrategicPatch,
  {
    readonly patch: (resource: Resource, key: ObjectKey, patch: Record<string, unknown>) => Effect.Effect<KubeObject, WriteError>
  }
>()("preheat/kube/StrategicPatch") {}
