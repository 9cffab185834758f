// Which pods a controller removes first when it has too many, as controller.ActivePods sorts
// them (the cheapest to lose first): not yet on a node, then not yet running, then not ready,
// then the most recently created.

export interface PodView {
  readonly name: string
  readonly nodeName: string | undefined
  readonly running: boolean
  readonly ready: boolean
  readonly created: string
}

const rank = (pod: PodView): number => (pod.nodeName === undefined ? 0 : !pod.running ? 1 : !pod.ready ? 2 : 3)

export const podsToDelete = (pods: ReadonlyArray<PodView>, count: number): ReadonlyArray<string> =>
  [...pods]
    .sort((a, b) => rank(a) - rank(b) || (a.created < b.created ? 1 : a.created > b.created ? -1 : 0) || (a.name < b.name ? 1 : -1))
    .slice(0, Math.max(0, count))
    .map((p) => p.name)
