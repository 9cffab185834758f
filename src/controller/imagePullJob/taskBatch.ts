// Several jobs' task changes to one NodeImage made into one write (taskWriter.ts), in the order they
// came. Pure.
import type { ImageSpec } from "../../api/nodeImage.ts"
import type { KubeObject } from "../../kube/KubeApi.ts"
import { changesApplyTo, imagesOf } from "../writes.ts"

/** One job's changes of one NodeImage's image entries (`undefined`: the image leaves), and the version it decided them on. */
export interface TaskChanges {
  readonly decidedOn: KubeObject | undefined
  readonly changes: ReadonlyMap<string, ImageSpec | undefined>
}

export interface TaskBatch {
  /** What the write carries: the changes of every part taken. */
  readonly changes: ReadonlyMap<string, ImageSpec | undefined>
  /** The parts the write carries, by their place in the batch. */
  readonly taken: ReadonlyArray<number>
  /** The parts that no longer apply (`changesApplyTo`), to be decided again on a newer version. */
  readonly stale: ReadonlyArray<number>
}

/**
 * The parts of `batch` that go into one write to `current`, the version the store holds now: in
 * order, each part that still applies on `current` with the parts taken before it, as if each had
 * been written in turn. A part that replaces an entry another part (or another write since its
 * decision) changed, or adds an image the NodeImage has no room left for, is stale: deciding it
 * again on the newer version is what writing it in turn would have done, after a Conflict.
 */
export const batchTaskChanges = (current: KubeObject | undefined, batch: ReadonlyArray<TaskChanges>): TaskBatch => {
  const changes = new Map<string, ImageSpec | undefined>()
  const taken: Array<number> = []
  const stale: Array<number> = []
  if (current === undefined) return { changes, taken, stale: batch.map((_, i) => i) }
  const images: Record<string, ImageSpec> = { ...imagesOf(current) }
  for (const [i, part] of batch.entries()) {
    if (part.decidedOn === undefined || !changesApplyTo(imagesOf(part.decidedOn), images, part.changes)) {
      stale.push(i)
      continue
    }
    taken.push(i)
    for (const [image, entry] of part.changes) {
      changes.set(image, entry)
      if (entry === undefined) delete images[image]
      else images[image] = entry
    }
  }
  return { changes, taken, stale }
}
