import type { ImageSpec, NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"

const views = new WeakMap<KubeObject, NodeImage>()

const withTagDefaults = (images: Readonly<Record<string, ImageSpec>>): Readonly<Record<string, ImageSpec>> => {
  let copy: Record<string, ImageSpec> | undefined
  for (const [name, entry] of Object.entries(images)) {
    if (entry.tags.every((t) => typeof t.version === "number" && t.imagePullPolicy !== undefined)) continue
    copy ??= { ...images }
    copy[name] = {
      ...entry,
      tags: entry.tags.map((t) => ({ ...t, version: t.version ?? 0, imagePullPolicy: t.imagePullPolicy ?? "IfNotPresent" }))
    }
  }
  return copy ?? images
}

/**
 * A stored NodeImage as the typed value the decisions read. The API server has already checked
 * its shape against the CRD schema, so this only fills in the defaults a server without our CRD
 * defaults may have left out, instead of decoding every version of every NodeImage (they change
 * with every pull). Views are cached per stored object, which never changes.
 */
export const nodeImageView = (raw: KubeObject): NodeImage => {
  const cached = views.get(raw)
  if (cached !== undefined) return cached
  const spec = (raw["spec"] ?? {}) as NodeImage["spec"]
  const view = {
    ...raw,
    spec: spec.images === undefined ? spec : { ...spec, images: withTagDefaults(spec.images) }
  } as unknown as NodeImage
  views.set(raw, view)
  return view
}
