import { fieldPath } from "../../api/invalidObject.ts"
import type { ImageSpec, ImageTagSpec, NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import type { Stored } from "../../kube/store.ts"

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A tag the decisions can act on: an object naming its tag, with a createdAt that is a time if any. */
const readable = (tag: unknown): tag is ImageTagSpec =>
  isObject(tag) &&
  typeof tag["tag"] === "string" &&
  (tag["createdAt"] === undefined || (typeof tag["createdAt"] === "string" && !Number.isNaN(Date.parse(tag["createdAt"]))))

const withTagDefaults = (images: Readonly<Record<string, unknown>>, unreadable: Array<string>): Readonly<Record<string, ImageSpec>> => {
  let copy: Record<string, ImageSpec> | undefined
  for (const [name, entry] of Object.entries(images)) {
    const tags = isObject(entry) ? entry["tags"] : undefined
    if (!Array.isArray(tags)) {
      // Left out of the view: no decision reads it, no write touches it; every other image goes on.
      unreadable.push(fieldPath(["spec", "images", name, "tags"]))
      copy ??= { ...(images as Record<string, ImageSpec>) }
      delete copy[name]
      continue
    }
    const kept: Array<ImageTagSpec> = []
    tags.forEach((tag, i) => {
      if (readable(tag)) kept.push(tag)
      else unreadable.push(fieldPath(["spec", "images", name, "tags", i]))
    })
    if (kept.length === tags.length && kept.every((t) => typeof t.version === "number" && t.imagePullPolicy !== undefined)) continue
    copy ??= { ...(images as Record<string, ImageSpec>) }
    copy[name] = {
      ...(entry as ImageSpec),
      tags: kept.map((t) => ({ ...t, version: t.version ?? 0, imagePullPolicy: t.imagePullPolicy ?? "IfNotPresent" }))
    }
  }
  return copy ?? (images as Readonly<Record<string, ImageSpec>>)
}

/**
 * A stored NodeImage as the typed value the decisions read. The API server has already checked
 * its shape against the CRD schema, so this only fills in the defaults a server without our CRD
 * defaults may have left out, instead of decoding every version of every NodeImage (they change
 * with every pull). The store computes it once per version (controller/stores.ts).
 *
 * A part that has not the shape the decisions need (a server without the CRD's schema, a hand
 * edit through one) is left out of the view, alone, and named by `unreadableParts`: one such
 * NodeImage stopped the controller's NodeImage store, and with it every job (issue 24).
 *
 * A version whose spec is the previous one's (the store keeps unchanged parts the same objects:
 * every status report of the daemons) takes the previous view's spec as it is, instead of reading
 * each tag of it again.
 */
export const nodeImageView = (raw: KubeObject, previous?: Stored<NodeImage>): NodeImage =>
  previous !== undefined && previous.raw["spec"] === raw["spec"] ? withSpec(raw, previous.view.spec) : read(raw).view

/** The stored object itself where its spec needs no defaults (nearly always): a second object per node is memory for nothing. */
const withSpec = (raw: KubeObject, spec: unknown): NodeImage => (spec === raw["spec"] ? raw : { ...raw, spec }) as unknown as NodeImage

/**
 * What of this NodeImage the controller leaves alone because it cannot read it: field paths. Read
 * again from the stored object when its reconcile reports them, rather than kept beside every view.
 */
export const unreadableParts = (raw: KubeObject): ReadonlyArray<string> => read(raw).unreadable

const read = (raw: KubeObject): { readonly view: NodeImage; readonly unreadable: ReadonlyArray<string> } => {
  const rawSpec = raw["spec"]
  const spec = isObject(rawSpec) ? rawSpec : {}
  const unreadable: Array<string> = []
  if (rawSpec !== undefined && !isObject(rawSpec)) unreadable.push("spec")
  const images = spec["images"]
  let viewSpec: Readonly<Record<string, unknown>> = spec
  if (images !== undefined && !isObject(images)) {
    unreadable.push("spec.images")
    const { images: _, ...rest } = spec
    viewSpec = rest
  } else if (images !== undefined) {
    const withDefaults = withTagDefaults(images, unreadable)
    if (withDefaults !== images) viewSpec = { ...spec, images: withDefaults }
  }
  return { view: withSpec(raw, viewSpec), unreadable }
}
