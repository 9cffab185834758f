import { Clock, Effect } from "effect"
import type { ImageSpec } from "../api/nodeImage.ts"
import { KubeApi } from "../kube/KubeApi.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import { mergePatchBetween } from "../kube/mergePatch.ts"
import { splitKey } from "../kube/objectKey.ts"
import { resources } from "../kube/resources.ts"
import type { Resource } from "../kube/resources.ts"
import type { Store } from "../kube/store.ts"
import { rfc3339 } from "../api/time.ts"
import { setCondition } from "./status/conditions.ts"

/** What a write reads from its store and gives back to it. */
type WrittenTo = Pick<Store<unknown>, "get" | "written">

/**
 * Replaces some image entries of one NodeImage with a merge patch that carries the
 * resourceVersion it was computed from: a concurrent writer makes it a Conflict and the reconcile
 * runs again on fresh state, instead of one job's write silently undoing another's (SPEC §4.7).
 * The result goes into the store at once, so the next decision sees it.
 */
export const patchNodeImages = (
  nodeImages: WrittenTo,
  node: string,
  changes: ReadonlyMap<string, ImageSpec | undefined>,
  labels?: Readonly<Record<string, string | null>>
) =>
  Effect.gen(function* () {
    const current = nodeImages.get(node)
    if (current === undefined) return
    const before = ((current["spec"] ?? {}) as { images?: Record<string, ImageSpec> }).images ?? {}
    const after: Record<string, ImageSpec> = { ...before }
    for (const [image, entry] of changes) {
      if (entry === undefined) delete after[image]
      else after[image] = entry
    }
    const images = mergePatchBetween(before, after)
    if (images === undefined && labels === undefined) return
    const api = yield* KubeApi
    const patched = yield* api.patch(
      resources.nodeImage,
      { name: node },
      {
        metadata: { resourceVersion: current.metadata.resourceVersion, ...(labels === undefined ? {} : { labels }) },
        ...(images === undefined ? {} : { spec: { images } })
      }
    )
    yield* nodeImages.written(patched)
  })

/** Writes a new status when it differs from the stored one (a merge patch of the difference). */
export const patchStatus = (resource: Resource, store: WrittenTo, object: KubeObject, status: unknown) =>
  Effect.gen(function* () {
    const diff = mergePatchBetween(object["status"] ?? {}, status)
    if (diff === undefined) return object
    const api = yield* KubeApi
    const patched = yield* api.patch(resource, splitKey(keyOf(object)), { status: diff }, "status")
    yield* store.written(patched)
    return patched
  })

const keyOf = (object: KubeObject): string =>
  object.metadata.namespace === undefined ? (object.metadata.name ?? "") : `${object.metadata.namespace}/${object.metadata.name}`

/**
 * An object that must not be acted on (SPEC §1, issue: invalid objects): a Valid=False condition
 * and the reason in status.message. Returns whether the condition changed, so the caller emits
 * its Warning event once, not on every reconcile.
 */
export const reportInvalid = (resource: Resource, store: WrittenTo, object: KubeObject, reason: string, message: string) =>
  Effect.gen(function* () {
    const now = rfc3339(yield* Clock.currentTimeMillis)
    const status = (object["status"] ?? {}) as { conditions?: ReadonlyArray<never>; message?: string }
    const previous = (status.conditions ?? []) as ReadonlyArray<{ type: string; reason?: string; message?: string; status: string }>
    const valid = previous.find((c) => c.type === "Valid")
    const changed = valid?.status !== "False" || valid.reason !== reason || valid.message !== message
    const conditions = setCondition(
      previous as never,
      {
        type: "Valid",
        status: "False",
        reason,
        message,
        ...(object.metadata.generation === undefined ? {} : { observedGeneration: object.metadata.generation })
      },
      now
    )
    yield* patchStatus(resource, store, object, { ...status, conditions, message })
    return changed
  })
