import { isDeepStrictEqual } from "node:util"
import { Clock, Effect } from "effect"
import { maxNodeImages } from "../api/nodeImage.ts"
import type { ImageSpec } from "../api/nodeImage.ts"
import { KubeApi } from "../kube/KubeApi.ts"
import type { JsonPatchOperation, KubeObject } from "../kube/KubeApi.ts"
import { mergePatchBetween } from "../json/mergePatch.ts"
import { splitKey } from "../kube/objectKey.ts"
import { resources } from "../kube/resources.ts"
import type { Resource } from "../kube/resources.ts"
import type { Store } from "../kube/store.ts"
import { rfc3339 } from "../api/time.ts"
import { setCondition } from "./status/conditions.ts"

/** What a write reads from its store and gives back to it. */
export type WrittenTo = Pick<Store<unknown>, "get" | "written">

/** RFC 6901: an object member's name as one token of a JSON pointer (image names hold "/"). */
const pointerToken = (name: string): string => name.replaceAll("~", "~0").replaceAll("/", "~1")

/**
 * The JSON patch that makes `spec.images` `after`: a test that the spec is still the one read,
 * then the changed entries. Only a spec write moves the generation, so the daemon's status reports
 * landing meanwhile (several per pull) do not refuse it, as a resourceVersion precondition would;
 * another job's write to this NodeImage does.
 */
const specPatch = (
  spec: { readonly images?: Readonly<Record<string, ImageSpec>> } | undefined,
  generation: number,
  changed: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, ImageSpec>>
): Array<JsonPatchOperation> => {
  // The generation moves with every change of the spec, and only then.
  const test: JsonPatchOperation = { op: "test", path: "/metadata/generation", value: generation }
  if (spec === undefined) return [test, { op: "add", path: "/spec", value: { images: after } }]
  if (spec.images === undefined) return [test, { op: "add", path: "/spec/images", value: after }]
  return [
    test,
    ...Object.keys(changed).map((image): JsonPatchOperation => {
      const path = `/spec/images/${pointerToken(image)}`
      const entry = after[image]
      return entry === undefined ? { op: "remove", path } : { op: "add", path, value: entry }
    })
  ]
}

type ImageMap = Readonly<Record<string, ImageSpec>>

/** A NodeImage's image entries (none when it has no spec). */
export const imagesOf = (object: KubeObject | undefined): ImageMap => (object?.["spec"] as { images?: ImageMap } | undefined)?.images ?? {}

/**
 * Replaces some image entries of one NodeImage, with a precondition: a concurrent writer makes it
 * a Conflict and the reconcile runs again on fresh state, instead of one job's write silently
 * undoing another's (SPEC §4.7). Image entries alone go as a JSON patch tested on the generation
 * (`specPatch`); with labels (which have no generation) as a merge patch carrying the
 * resourceVersion. The result goes into the store at once, so the next decision sees it.
 */
export const patchNodeImages = (
  nodeImages: WrittenTo,
  node: string,
  changes: ReadonlyMap<string, ImageSpec | undefined>,
  labels?: Readonly<Record<string, string | null>>
) => Effect.suspend(() => patchNodeImage(nodeImages, nodeImages.get(node), changes, labels))

/** patchNodeImages on the version `current` of the NodeImage, as the store held it. */
export const patchNodeImage = (
  nodeImages: WrittenTo,
  current: KubeObject | undefined,
  changes: ReadonlyMap<string, ImageSpec | undefined>,
  labels?: Readonly<Record<string, string | null>>
) =>
  Effect.gen(function* () {
    if (current === undefined) return
    const spec = current["spec"] as { images?: ImageMap } | undefined
    const before = spec?.images ?? {}
    const after: Record<string, ImageSpec> = { ...before }
    for (const [image, entry] of changes) {
      if (entry === undefined) delete after[image]
      else after[image] = entry
    }
    const images = mergePatchBetween(before, after)
    if (images === undefined && labels === undefined) return
    const api = yield* KubeApi
    const generation = current.metadata.generation
    const body =
      labels === undefined && generation !== undefined && images !== undefined
        ? specPatch(spec, generation, images as Record<string, unknown>, after)
        : {
            metadata: { resourceVersion: current.metadata.resourceVersion, ...(labels === undefined ? {} : { labels }) },
            ...(images === undefined ? {} : { spec: { images } })
          }
    const patched = yield* api.patch(resources.nodeImage, { name: current.metadata.name ?? "" }, body)
    yield* nodeImages.written(patched)
  })

/**
 * Whether image entry changes decided on one version of a NodeImage still apply to a newer one:
 * every entry they replace is as it was (another writer changed other images only), and the result
 * holds no more images than a NodeImage may. Then writing them on the newer version is what
 * deciding again would write; otherwise the decision is made again on the newer version.
 */
export const changesStillApply = (
  decidedOn: KubeObject | undefined,
  current: KubeObject | undefined,
  changes: ReadonlyMap<string, ImageSpec | undefined>
): boolean => {
  if (decidedOn === current) return true
  if (decidedOn === undefined || current === undefined) return false
  return changesApplyTo(imagesOf(decidedOn), imagesOf(current), changes)
}

/** changesStillApply on the image entries: decided on `before`, to be written on `now`. */
export const changesApplyTo = (before: ImageMap, now: ImageMap, changes: ReadonlyMap<string, ImageSpec | undefined>): boolean => {
  let added = 0
  for (const [image, entry] of changes) {
    const was = before[image]
    if (now[image] !== was && !isDeepStrictEqual(now[image], was)) return false
    if (was === undefined && entry !== undefined) added++
  }
  return added === 0 || Object.keys(now).length + added <= maxNodeImages
}

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
