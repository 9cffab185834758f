// What the controller reads of a NodeImage's status: the only parts its NodeImage store keeps of
// it, as nodeFields.ts keeps a Node (client-go's SetTransform).
import { isPlainObject, setOwn } from "../../json/plainObject.ts"
import type { JsonObject } from "../../json/plainObject.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"

/**
 * A NodeImage as the controller's store holds it: the whole object but, in its status, what no
 * decision reads: `firstSyncStatus`, and of each tag's status its `imageID` and `startTime`, the
 * `progress` of a finished tag and the `message` of a succeeded one (the daemon's
 * `pulled image "…" on node N in 3s`). Those differ on every node, so they kept every node's tag
 * statuses apart: about 100 bytes of message alone per tag and node, in a store of a NodeImage per
 * node. Without them the finished tags of nodes that completed in the same second are equal, and
 * the store holds them once (alikeObjects.ts). A reader of another field adds it here
 * (test/controller/nodeImageAsRead.test.ts). A status the controller writes is built from the
 * server's copy of the NodeImage, never from this one (reconcile.ts failTags).
 */
export const nodeImageAsRead = (nodeImage: KubeObject): KubeObject => {
  const status = nodeImage["status"]
  if (!isPlainObject(status)) return nodeImage
  const imageStatuses = status["imageStatuses"]
  const kept = isPlainObject(imageStatuses) ? imagesAsRead(imageStatuses) : imageStatuses
  if (kept === imageStatuses && !Object.hasOwn(status, "firstSyncStatus")) return nodeImage
  const { firstSyncStatus: _, ...rest } = status
  return { ...nodeImage, status: kept === undefined ? rest : { ...rest, imageStatuses: kept } }
}

const imagesAsRead = (images: JsonObject): JsonObject => {
  let copy: Record<string, unknown> | undefined
  for (const [name, image] of Object.entries(images)) {
    if (!isPlainObject(image)) continue
    const tags = image["tags"]
    if (!Array.isArray(tags)) continue
    let keptTags: Array<unknown> | undefined
    tags.forEach((tag, i) => {
      const kept = tagAsRead(tag)
      if (kept === tag) return
      keptTags ??= [...tags]
      keptTags[i] = kept
    })
    if (keptTags !== undefined) setOwn((copy ??= { ...images }), name, { ...image, tags: keptTags })
  }
  return copy ?? images
}

const tagAsRead = (tag: unknown): unknown => {
  if (!isPlainObject(tag)) return tag
  const succeeded = tag["phase"] === "Succeeded"
  const finished = succeeded || tag["phase"] === "Failed"
  const drops =
    Object.hasOwn(tag, "imageID") ||
    Object.hasOwn(tag, "startTime") ||
    (finished && Object.hasOwn(tag, "progress")) ||
    (succeeded && Object.hasOwn(tag, "message"))
  if (!drops) return tag
  const { imageID: _id, startTime: _start, progress, message, ...rest } = tag
  return {
    ...rest,
    ...(progress === undefined || finished ? {} : { progress }),
    ...(message === undefined || succeeded ? {} : { message })
  }
}
