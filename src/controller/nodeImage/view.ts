import type { ImageSpec, NodeImage } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"

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
 * with every pull). The store computes it once per version (controller/stores.ts).
 */
export const nodeImageView = (raw: KubeObject): NodeImage => {
  const spec = (raw["spec"] ?? {}) as NodeImage["spec"]
  return {
    ...raw,
    spec: spec.images === undefined ? spec : { ...spec, images: withTagDefaults(spec.images) }
  } as unknown as NodeImage
}
