// How many replicas each of a Deployment's ReplicaSets should have next: the arithmetic of
// k8s.io/kubernetes pkg/controller/deployment/rolling.go and recreate.go, on plain numbers.

export interface ReplicaSetView {
  readonly name: string
  /** spec.replicas */
  readonly replicas: number
  /** status.availableReplicas, never counted above spec.replicas (a stale status must not free more). */
  readonly available: number
  /** status.replicas: pods that still exist. */
  readonly pods: number
}

export interface RolloutInput {
  readonly desired: number
  readonly strategy:
    | { readonly type: "RollingUpdate"; readonly maxSurge: number; readonly maxUnavailable: number }
    | { readonly type: "Recreate" }
  readonly newReplicaSet: ReplicaSetView
  /** Oldest first: the order they are scaled down in. */
  readonly oldReplicaSets: ReadonlyArray<ReplicaSetView>
}

/** The next spec.replicas of every ReplicaSet whose count changes, by name. */
export type ScaleDecisions = ReadonlyMap<string, number>

const sum = (sets: ReadonlyArray<ReplicaSetView>, pick: (s: ReplicaSetView) => number) => sets.reduce((n, s) => n + pick(s), 0)

const clampAvailable = (set: ReplicaSetView): ReplicaSetView => ({ ...set, available: Math.min(set.available, set.replicas) })

/** maxSurge rounds up, maxUnavailable down; both zero would never move, so unavailable becomes 1 (as kube does). */
export const resolveRollingLimits = (desired: number, maxSurge: number, maxUnavailable: number) =>
  maxSurge === 0 && maxUnavailable === 0
    ? { maxSurge: 0, maxUnavailable: 1 }
    : { maxSurge, maxUnavailable: Math.min(maxUnavailable, desired) }

export const planRollout = (input: RolloutInput): ScaleDecisions => {
  const decisions = new Map<string, number>()
  const olds = input.oldReplicaSets.map(clampAvailable)
  const current = clampAvailable(input.newReplicaSet)

  if (input.strategy.type === "Recreate") {
    const running = olds.filter((s) => s.replicas > 0)
    for (const s of running) decisions.set(s.name, 0)
    // The new pods start only once every old pod is gone.
    if (running.length === 0 && sum(olds, (s) => s.pods) === 0 && current.replicas !== input.desired) {
      decisions.set(current.name, input.desired)
    }
    return decisions
  }

  const { maxSurge, maxUnavailable } = input.strategy
  // Scale the new ReplicaSet up as far as the surge allows (never above desired), or down to desired.
  let newReplicas = current.replicas
  if (current.replicas > input.desired) newReplicas = input.desired
  else if (current.replicas < input.desired) {
    const total = current.replicas + sum(olds, (s) => s.replicas)
    const room = input.desired + maxSurge - total
    if (room > 0) newReplicas = Math.min(current.replicas + room, input.desired)
  }
  if (newReplicas !== current.replicas) decisions.set(current.name, newReplicas)

  // Scale the old ones down as far as availability allows.
  const minAvailable = input.desired - maxUnavailable
  const newUnavailable = Math.max(0, newReplicas - current.available)
  const allPods = newReplicas + sum(olds, (s) => s.replicas)
  const maxScaledDown = allPods - minAvailable - newUnavailable
  if (maxScaledDown <= 0) return decisions

  // First the old pods that are not available anyway: removing them costs no availability.
  const next = olds.map((s) => ({ ...s }))
  let cleaned = 0
  for (const s of next) {
    if (cleaned >= maxScaledDown) break
    const unhealthy = s.replicas - s.available
    const down = Math.min(unhealthy, maxScaledDown - cleaned)
    if (down > 0) {
      s.replicas -= down
      cleaned += down
    }
  }
  // Then available ones, while more than minAvailable pods stay available.
  const available = current.available + sum(next, (s) => s.available)
  let budget = available - minAvailable
  for (const s of next) {
    if (budget <= 0) break
    const down = Math.min(s.replicas, budget)
    s.replicas -= down
    budget -= down
  }
  for (const [i, s] of next.entries()) if (s.replicas !== olds[i]!.replicas) decisions.set(s.name, s.replicas)
  return decisions
}
