/**
 * The pure decisions of `preheat dev`'s workload stand-ins: the template hash, the rolling
 * update's arithmetic, which pods go first, StatefulSet and DaemonSet plans, the scheduler's choice.
 */
import { describe, expect, it } from "vitest"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { planDaemonSet, type DaemonPod } from "../../../harness/cluster/workloadStandIns/daemonSetPlan.ts"
import { chooseNode } from "../../../harness/cluster/workloadStandIns/nodeChoice.ts"
import { scaled } from "../../../harness/cluster/workloadStandIns/objects.ts"
import { podsToDelete } from "../../../harness/cluster/workloadStandIns/podChoice.ts"
import { goDuration } from "../../../harness/cluster/workloadStandIns/podStatus.ts"
import {
  planRollout,
  resolveRollingLimits,
  type ReplicaSetView,
  type RolloutInput
} from "../../../harness/cluster/workloadStandIns/rollingUpdate.ts"
import { planStatefulSet, type OrdinalPod } from "../../../harness/cluster/workloadStandIns/statefulSetPlan.ts"
import { canonicalJson, fnv32a, safeEncode, templateHash } from "../../../harness/cluster/workloadStandIns/templateHash.ts"

describe("template hash", () => {
  it("is FNV-1a 32 (the published test vectors)", () => {
    expect(fnv32a("")).toBe(0x811c9dc5)
    expect(fnv32a("a")).toBe(0xe40c292c)
    expect(fnv32a("foobar")).toBe(0xbf9cf968)
  })

  it("encodes digits with apimachinery's safe alphabet, as real pod-template-hashes look", () => {
    expect(safeEncode("0123456789")).toBe("456789bcdf")
    expect(templateHash({ spec: {} })).toMatch(/^[4-9bcdf]{1,10}$/)
  })

  it("is the same for the same template whatever its key order, and changes with the image", () => {
    const a = { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx:1" }] } }
    const b = { spec: { containers: [{ image: "nginx:1", name: "c" }] }, metadata: { labels: { app: "web" } } }
    expect(canonicalJson(a)).toBe(canonicalJson(b))
    expect(templateHash(a)).toBe(templateHash(b))
    expect(templateHash({ ...a, spec: { containers: [{ name: "c", image: "nginx:2" }] } })).not.toBe(templateHash(a))
  })

  it("ignores what only says 'not set': the template kubectl rollout undo writes back hashes as before", () => {
    const a = { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx:1" }] } }
    const undone = {
      metadata: { creationTimestamp: null, labels: { app: "web" } },
      spec: { containers: [{ name: "c", image: "nginx:1", resources: {}, ports: [] }] }
    }
    expect(templateHash(undone)).toBe(templateHash(a))
  })
})

describe("int-or-percent", () => {
  it("scales percentages against the total, rounding as asked", () => {
    expect(scaled("25%", 3, true)).toBe(1)
    expect(scaled("25%", 3, false)).toBe(0)
    expect(scaled(2, 10, false)).toBe(2)
    expect(resolveRollingLimits(3, 0, 0)).toEqual({ maxSurge: 0, maxUnavailable: 1 })
  })
})

/** Runs a rollout to the end, every pod becoming available at once, checking the limits at every step. */
const rollOut = (desired: number, strategy: RolloutInput["strategy"], oldReplicas: number) => {
  let current: ReplicaSetView = { name: "new", replicas: 0, available: 0, pods: 0 }
  let olds: Array<ReplicaSetView> = [{ name: "old", replicas: oldReplicas, available: oldReplicas, pods: oldReplicas }]
  const steps: Array<[number, number]> = []
  for (let i = 0; i < 50; i++) {
    const plan = planRollout({ desired, strategy, newReplicaSet: current, oldReplicaSets: olds })
    if (plan.size === 0) break
    const n = plan.get("new") ?? current.replicas
    // The new pods are created (not yet available) and the old ones deleted, then a step later ready.
    current = { ...current, replicas: n, pods: n }
    olds = olds.map((s) => {
      const r = plan.get(s.name) ?? s.replicas
      return { ...s, replicas: r, available: Math.min(s.available, r), pods: r }
    })
    steps.push([current.replicas, olds[0]!.replicas])
    if (strategy.type === "RollingUpdate") {
      const available = current.available + olds[0]!.available
      expect(available).toBeGreaterThanOrEqual(desired - strategy.maxUnavailable)
      expect(current.replicas + olds[0]!.replicas).toBeLessThanOrEqual(desired + strategy.maxSurge)
    }
    current = { ...current, available: current.replicas }
  }
  return { steps, final: [current.replicas, olds[0]!.replicas] }
}

describe("rolling update of a Deployment", () => {
  it("with kube's defaults (25% / 25% of 3: surge 1, unavailable 0) adds one new pod, then removes one old", () => {
    const { final, steps } = rollOut(3, { type: "RollingUpdate", maxSurge: 1, maxUnavailable: 0 }, 3)
    expect(final).toEqual([3, 0])
    expect(steps[0]).toEqual([1, 3])
    expect(steps[1]).toEqual([1, 2])
  })

  it("with maxUnavailable 2 and no surge removes two old pods first", () => {
    const { final, steps } = rollOut(4, { type: "RollingUpdate", maxSurge: 0, maxUnavailable: 2 }, 4)
    expect(steps[0]).toEqual([0, 2])
    expect(final).toEqual([4, 0])
  })

  it("does not count a stale status (more available than replicas) as availability", () => {
    const plan = planRollout({
      desired: 3,
      strategy: { type: "RollingUpdate", maxSurge: 1, maxUnavailable: 0 },
      newReplicaSet: { name: "new", replicas: 2, available: 2, pods: 2 },
      oldReplicaSets: [{ name: "old", replicas: 2, available: 3, pods: 3 }]
    })
    expect(plan.get("old")).toBe(1)
  })

  it("Recreate scales the old ones to zero and starts the new one only when their pods are gone", () => {
    const strategy = { type: "Recreate" } as const
    const olds = [{ name: "old", replicas: 3, available: 3, pods: 3 }]
    const current = { name: "new", replicas: 0, available: 0, pods: 0 }
    expect([...planRollout({ desired: 3, strategy, newReplicaSet: current, oldReplicaSets: olds })]).toEqual([["old", 0]])
    const draining = [{ name: "old", replicas: 0, available: 1, pods: 1 }]
    expect(planRollout({ desired: 3, strategy, newReplicaSet: current, oldReplicaSets: draining }).size).toBe(0)
    const gone = [{ name: "old", replicas: 0, available: 0, pods: 0 }]
    expect([...planRollout({ desired: 3, strategy, newReplicaSet: current, oldReplicaSets: gone })]).toEqual([["new", 3]])
  })

  it("scales a finished rollout down to the new replica count", () => {
    const plan = planRollout({
      desired: 2,
      strategy: { type: "RollingUpdate", maxSurge: 1, maxUnavailable: 0 },
      newReplicaSet: { name: "new", replicas: 5, available: 5, pods: 5 },
      oldReplicaSets: []
    })
    expect(plan.get("new")).toBe(2)
  })
})

describe("pods removed first", () => {
  it("are unscheduled, then pending, then not ready, then the newest", () => {
    const pod = (name: string, nodeName: string | undefined, running: boolean, ready: boolean, created: string) => ({
      name,
      nodeName,
      running,
      ready,
      created
    })
    const pods = [
      pod("ready-old", "n1", true, true, "2026-01-01T00:00:00Z"),
      pod("ready-new", "n1", true, true, "2026-01-02T00:00:00Z"),
      pod("unready", "n1", true, false, "2026-01-01T00:00:00Z"),
      pod("pending", "n1", false, false, "2026-01-01T00:00:00Z"),
      pod("unscheduled", undefined, false, false, "2026-01-01T00:00:00Z")
    ]
    expect(podsToDelete(pods, 5)).toEqual(["unscheduled", "pending", "unready", "ready-new", "ready-old"])
    expect(podsToDelete(pods, 0)).toEqual([])
  })
})

describe("StatefulSet plan", () => {
  const pod = (ordinal: number, revision: string, ready = true, terminating = false): OrdinalPod => ({
    ordinal,
    name: `db-${ordinal}`,
    revision,
    ready,
    terminating
  })
  const base = { replicas: 3, currentRevision: "db-a", updateRevision: "db-a", parallel: false, partition: 0 }

  it("creates pods in order, each once its predecessors are Ready", () => {
    expect(planStatefulSet({ ...base, pods: [] })).toEqual({ create: [{ ordinal: 0, revision: "db-a" }], delete: [] })
    expect(planStatefulSet({ ...base, pods: [pod(0, "db-a", false)] })).toEqual({ create: [], delete: [] })
    expect(planStatefulSet({ ...base, pods: [pod(0, "db-a")] }).create).toEqual([{ ordinal: 1, revision: "db-a" }])
    expect(planStatefulSet({ ...base, parallel: true, pods: [] }).create.map((c) => c.ordinal)).toEqual([0, 1, 2])
  })

  it("replaces pods from the highest ordinal down, one at a time, only while all are Ready", () => {
    const update = { ...base, updateRevision: "db-b" }
    expect(planStatefulSet({ ...update, pods: [pod(0, "db-a"), pod(1, "db-a"), pod(2, "db-a")] }).delete).toEqual(["db-2"])
    expect(planStatefulSet({ ...update, pods: [pod(0, "db-a"), pod(1, "db-a"), pod(2, "db-b", false)] }).delete).toEqual([])
    expect(planStatefulSet({ ...update, pods: [pod(0, "db-a"), pod(1, "db-a"), pod(2, "db-b")] }).delete).toEqual(["db-1"])
    expect(planStatefulSet({ ...update, pods: [pod(0, "db-a"), pod(1, "db-a")] }).create).toEqual([{ ordinal: 2, revision: "db-b" }])
  })

  it("honours the partition: ordinals below it keep (and are re-created at) the current revision", () => {
    const update = { ...base, updateRevision: "db-b", partition: 2 }
    expect(planStatefulSet({ ...update, pods: [pod(0, "db-a"), pod(1, "db-a"), pod(2, "db-b")] }).delete).toEqual([])
    expect(planStatefulSet({ ...update, pods: [pod(1, "db-a"), pod(2, "db-b")] }).create).toEqual([{ ordinal: 0, revision: "db-a" }])
  })

  it("OnDelete never replaces; scaling down removes the highest ordinal first", () => {
    const pods = [pod(0, "db-a"), pod(1, "db-a"), pod(2, "db-a")]
    expect(planStatefulSet({ ...base, updateRevision: "db-b", partition: undefined, pods }).delete).toEqual([])
    expect(planStatefulSet({ ...base, replicas: 1, pods }).delete).toEqual(["db-2"])
  })
})

describe("DaemonSet plan", () => {
  const nodes = [
    { name: "node-1", ready: true, matches: true },
    { name: "node-2", ready: true, matches: true },
    { name: "node-3", ready: true, matches: false },
    { name: "node-4", ready: false, matches: true }
  ]
  const pod = (name: string, nodeName: string, updated: boolean, ready = true): DaemonPod => ({
    name,
    nodeName,
    updated,
    ready,
    terminating: false,
    created: "2026-01-01T00:00:00Z"
  })

  it("puts one pod on every matching Ready node and removes pods from nodes that no longer match", () => {
    expect(planDaemonSet({ nodes, pods: [], maxUnavailable: 1 })).toEqual({
      create: ["node-1", "node-2"],
      delete: [],
      desired: ["node-1", "node-2"]
    })
    const plan = planDaemonSet({ nodes, pods: [pod("a", "node-3", true), pod("b", "node-1", true)], maxUnavailable: 1 })
    expect(plan).toEqual({ create: ["node-2"], delete: ["a"], desired: ["node-1", "node-2"] })
  })

  it("keeps a running pod on a node that became not Ready", () => {
    expect(planDaemonSet({ nodes, pods: [pod("d", "node-4", true)], maxUnavailable: 1 }).desired).toContain("node-4")
  })

  it("updates at most maxUnavailable nodes at once, unavailable old pods first", () => {
    const pods = [pod("a", "node-1", false), pod("b", "node-2", false)]
    expect(planDaemonSet({ nodes, pods, maxUnavailable: 1 }).delete).toEqual(["a"])
    expect(planDaemonSet({ nodes, pods, maxUnavailable: 2 }).delete).toEqual(["a", "b"])
    const newUnready = [pod("a", "node-1", true, false), pod("b", "node-2", false)]
    expect(planDaemonSet({ nodes, pods: newUnready, maxUnavailable: 1 }).delete).toEqual([])
    const oldUnready = [pod("a", "node-1", false, false), pod("b", "node-2", false)]
    expect(planDaemonSet({ nodes, pods: oldUnready, maxUnavailable: 1 }).delete).toEqual(["a"])
    expect(planDaemonSet({ nodes, pods, maxUnavailable: undefined }).delete).toEqual([])
  })
})

describe("scheduler's choice", () => {
  const node = (name: string, labels: Record<string, string>, ready = true, unschedulable = false): KubeObject => ({
    metadata: { name, labels },
    spec: unschedulable ? { unschedulable: true } : {},
    status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] }
  })
  const nodes = [
    node("node-10", { zone: "a" }),
    node("node-2", { zone: "a" }),
    node("node-3", { zone: "b" }, false),
    node("node-1", { zone: "b" }, true, true)
  ]

  it("takes the Ready, schedulable, matching node with the fewest pods, ties by name", () => {
    expect(chooseNode({}, undefined, nodes, () => 0)).toEqual({ _tag: "Node", name: "node-2" })
    expect(chooseNode({}, undefined, nodes, (n) => (n === "node-2" ? 1 : 0))).toEqual({ _tag: "Node", name: "node-10" })
    expect(chooseNode({ zone: "a" }, undefined, nodes, (n) => (n === "node-10" ? 0 : 5))).toEqual({ _tag: "Node", name: "node-10" })
  })

  it("says why no node fits, in kube-scheduler's words", () => {
    expect(chooseNode({ zone: "b" }, undefined, nodes, () => 0)).toEqual({
      _tag: "Unschedulable",
      message:
        "0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, " +
        "1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable."
    })
  })

  it("keeps a pod off a node with a NoSchedule or NoExecute taint it does not tolerate", () => {
    const warming = { key: "preheat.kruise.io/warming", effect: "NoSchedule" }
    const tainted = (name: string, taints: ReadonlyArray<unknown>): KubeObject => ({
      metadata: { name },
      spec: { taints },
      status: { conditions: [{ type: "Ready", status: "True" }] }
    })
    const only = [tainted("node-1", [warming]), tainted("node-2", [{ key: "gpu", value: "a100", effect: "NoExecute" }])]
    expect(chooseNode({}, undefined, only, () => 0)).toEqual({
      _tag: "Unschedulable",
      message:
        "0/2 nodes are available: 1 node(s) had untolerated taint {preheat.kruise.io/warming: }, " +
        "1 node(s) had untolerated taint {gpu: a100}."
    })
    // Tolerated by key (Exists), by key and value (Equal), or by everything (an empty key with Exists).
    expect(chooseNode({}, [{ key: "preheat.kruise.io/warming", operator: "Exists" }], only, () => 0)).toEqual({
      _tag: "Node",
      name: "node-1"
    })
    expect(chooseNode({}, [{ key: "gpu", value: "a100", effect: "NoExecute" }], only, () => 0)).toEqual({ _tag: "Node", name: "node-2" })
    expect(chooseNode({}, [{ key: "gpu", value: "h100" }], only, () => 0)._tag).toBe("Unschedulable")
    expect(chooseNode({}, [{ key: "gpu", effect: "NoSchedule", operator: "Exists" }], only, () => 0)._tag).toBe("Unschedulable")
    expect(chooseNode({}, [{ operator: "Exists" }], only, () => 5)).toEqual({ _tag: "Node", name: "node-1" })
    // PreferNoSchedule is a preference only.
    expect(chooseNode({}, undefined, [tainted("node-3", [{ key: "x", effect: "PreferNoSchedule" }])], () => 0)).toEqual({
      _tag: "Node",
      name: "node-3"
    })
  })
})

describe("the kubelet's durations", () => {
  it("print as Go prints a time.Duration truncated to milliseconds", () => {
    expect(goDuration(512)).toBe("512ms")
    expect(goDuration(1200)).toBe("1.2s")
    expect(goDuration(2000)).toBe("2s")
    expect(goDuration(61_005)).toBe("1m1.005s")
  })
})
