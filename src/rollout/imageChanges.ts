// Which containers a rollout changes, which images are new to the workload, and the patch that
// sets them: the strategic merge patch `kubectl set image` sends, byte for byte.
import { Result } from "effect"
import { ContainerNotFound } from "./errors.ts"
import type { ImageSetting } from "./imageSettings.ts"
import type { ContainerList, TemplateContainer, WorkloadTemplate } from "./podTemplate.ts"

export interface ContainerChange {
  readonly list: ContainerList
  readonly name: string
  readonly from: string
  readonly to: string
}

export interface NewImage {
  readonly image: string
  /** The containers that will run it, in template order. */
  readonly containers: ReadonlyArray<string>
}

/**
 * The containers whose image changes, in template order (containers, then init containers). As
 * kubectl: `*` means every container, a name not in the template fails, a container already
 * running the image is no change.
 */
export const imageChanges = (
  template: WorkloadTemplate,
  settings: ReadonlyArray<ImageSetting>
): Result.Result<ReadonlyArray<ContainerChange>, ContainerNotFound> => {
  const missing = settings.find((s) => s.container !== "*" && !template.containers.some((c) => c.name === s.container))
  if (missing !== undefined) return Result.fail(new ContainerNotFound({ container: missing.container }))
  const wanted = (c: TemplateContainer): string | undefined =>
    (settings.find((s) => s.container === c.name) ?? settings.find((s) => s.container === "*"))?.image
  return Result.succeed(
    template.containers.flatMap((c) => {
      const to = wanted(c)
      return to === undefined || to === c.image ? [] : [{ list: c.list, name: c.name, from: c.image, to }]
    })
  )
}

/**
 * The images the changes bring that no container of the template runs now: only those need a
 * pre-pull (an image some container runs is on the nodes of its pods already).
 */
export const newImages = (template: WorkloadTemplate, changes: ReadonlyArray<ContainerChange>): ReadonlyArray<NewImage> => {
  const running = new Set(template.containers.map((c) => c.image))
  const byImage = new Map<string, Array<string>>()
  for (const change of changes) {
    if (running.has(change.to)) continue
    const containers = byImage.get(change.to) ?? []
    containers.push(change.name)
    byImage.set(change.to, containers)
  }
  return [...byImage].map(([image, containers]) => ({ image, containers }))
}

/**
 * kubectl's patch (CreateTwoWayMergePatch of the template before and after): per changed list
 * the `$setElementOrder` directive with every name of that list, then the changed entries with
 * `image` and `name`; keys in Go's sorted map order, so JSON.stringify gives kubectl's bytes.
 */
export const setImagePatch = (template: WorkloadTemplate, changes: ReadonlyArray<ContainerChange>): Record<string, unknown> => {
  const lists: ReadonlyArray<ContainerList> = ["containers", "initContainers"]
  const changed = lists.filter((list) => changes.some((c) => c.list === list))
  const podSpec: Record<string, unknown> = {}
  for (const list of changed) {
    podSpec[`$setElementOrder/${list}`] = template.containers.filter((c) => c.list === list).map((c) => ({ name: c.name }))
  }
  for (const list of changed) {
    podSpec[list] = changes.filter((c) => c.list === list).map((c) => ({ image: c.to, name: c.name }))
  }
  return { spec: { template: { spec: podSpec } } }
}
