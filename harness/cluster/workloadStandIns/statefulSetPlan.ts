// What a StatefulSet controller does next, as k8s.io/kubernetes pkg/controller/statefulset's
// updateStatefulSet orders it: pods <name>-0..N-1 created in order (OrderedReady: one at a time,
// each once its predecessors are Ready; Parallel: all at once), surplus ordinals removed from the
// highest, and a RollingUpdate that replaces, from the highest ordinal down to the partition, one
// pod at a time and only while every pod is Ready.

export interface OrdinalPod {
  readonly ordinal: number
  readonly name: string
  /** Its controller-revision-hash label. */
  readonly revision: string | undefined
  readonly ready: boolean
  readonly terminating: boolean
}

export interface StatefulSetInput {
  readonly replicas: number
  readonly pods: ReadonlyArray<OrdinalPod>
  readonly currentRevision: string
  readonly updateRevision: string
  readonly parallel: boolean
  /** undefined for OnDelete: pods are replaced only when someone deletes them. */
  readonly partition: number | undefined
}

export interface StatefulSetPlan {
  readonly create: ReadonlyArray<{ readonly ordinal: number; readonly revision: string }>
  readonly delete: ReadonlyArray<string>
}

/** The revision a new pod at `ordinal` gets: below the partition the current one, else the update. */
const revisionFor = (input: StatefulSetInput, ordinal: number): string =>
  input.partition !== undefined && ordinal < input.partition ? input.currentRevision : input.updateRevision

export const planStatefulSet = (input: StatefulSetInput): StatefulSetPlan => {
  const byOrdinal = new Map(input.pods.map((p) => [p.ordinal, p]))
  const create: Array<{ ordinal: number; revision: string }> = []
  let settled = true
  for (let ordinal = 0; ordinal < input.replicas; ordinal++) {
    const pod = byOrdinal.get(ordinal)
    if (pod === undefined) {
      create.push({ ordinal, revision: revisionFor(input, ordinal) })
      settled = false
      if (!input.parallel) break
    } else if (!pod.ready || pod.terminating) {
      settled = false
      if (!input.parallel) break
    }
  }
  if (create.length > 0) return { create, delete: [] }

  const condemned = input.pods.filter((p) => p.ordinal >= input.replicas).sort((a, b) => b.ordinal - a.ordinal)
  if (condemned.length > 0) {
    if (input.parallel) return { create, delete: condemned.filter((p) => !p.terminating).map((p) => p.name) }
    const highest = condemned[0]!
    return { create, delete: settled && !highest.terminating ? [highest.name] : [] }
  }

  if (input.partition === undefined || !settled) return { create, delete: [] }
  for (let ordinal = input.replicas - 1; ordinal >= input.partition; ordinal--) {
    const pod = byOrdinal.get(ordinal)
    if (pod !== undefined && pod.revision !== input.updateRevision) return { create, delete: [pod.name] }
  }
  return { create, delete: [] }
}
