// ImageUnreported end to end on the in-memory API server, on TestClock (issue 39): the controller
// and the real daemons (each on its own simulated runtime) in one process, each node's
// status.images written here as its kubelet would. A job's image pulled on a node whose kubelet
// lists its 50 largest images, the job's not among them, gets its tag marked by that node's daemon
// once the kubelet had time to list it, and the job the condition and one Warning; a node listing
// fewer is only late; once listed the mark goes and the condition turns False. The controller
// reads no Node's status.images for it: only the daemons' marks.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { makeController } from "../../src/controller/controller.ts"
import { startDaemon } from "../../src/daemon/daemon.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { advance, get, harnessLayer, readyNode } from "../support/controllerHarness.ts"

const image = "registry.example.com/team/small"

const job: KubeObject = {
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name: "small", namespace: "default" },
  spec: { image: `${image}:1`, parallelism: 10, completionPolicy: { type: "Never" } }
}

/** The controller, and a daemon per node with its kubelet's cap (`--node-status-max-images`). */
const startCluster = (nodes: ReadonlyArray<string>, nodeStatusMaxImages?: number) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    for (const node of nodes) yield* api.create(resources.node, readyNode(node))
    const controller = yield* makeController(defaultSettings)
    yield* Effect.forkScoped(controller.reconcile())
    for (const node of nodes) {
      yield* startDaemon(daemonOptions({ nodeName: node, ...(nodeStatusMaxImages === undefined ? {} : { nodeStatusMaxImages }) })).pipe(
        Effect.provide([SimulatedRuntime.layer(), Metrics.layerTest])
      )
    }
    yield* advance(31_000)
  })

/** What a kubelet lists: these images, each by its repo tag, largest first. */
const listImages = (node: string, names: ReadonlyArray<string>) =>
  Effect.flatMap(Effect.service(KubeApi), (api) =>
    api.patch(
      resources.node,
      { name: node },
      { status: { images: names.map((name, i) => ({ names: [name], sizeBytes: 10_000_000_000 - i })) } },
      "status"
    )
  )
const fillers = (n: number) => Array.from({ length: n }, (_, i) => `registry.example.com/big/image-${i}:1`)

const tagOf = (node: string) =>
  Effect.map(
    get(resources.nodeImage, node),
    (o) =>
      (o["status"] as { imageStatuses?: Record<string, { tags: ReadonlyArray<ImageTagStatus> }> } | undefined)?.imageStatuses?.[image]
        ?.tags[0]
  )

interface Condition {
  readonly type: string
  readonly status: string
  readonly reason?: string
  readonly message?: string
}
const condition = Effect.map(get(resources.imagePullJob, "small", "default"), (object) =>
  ((object["status"] as { conditions?: ReadonlyArray<Condition> } | undefined)?.conditions ?? []).find((c) => c.type === "ImageUnreported")
)

const warnings = Effect.gen(function* () {
  const api = yield* KubeApi
  const events = yield* api.list(resources.event, { namespace: "default" })
  return events.items
    .filter((e) => e["reason"] === "ImageUnreported")
    .map((e) => ({ message: String(e["message"]), count: e["count"] ?? 1 }))
})

describe("ImageUnreported, on an in-memory cluster with the real daemons", () => {
  it.effect("said of the nodes whose full list leaves the image out, once the kubelet had time; False once listed", () =>
    Effect.gen(function* () {
      yield* startCluster(["n1", "n2"])
      const api = yield* KubeApi
      // n1's kubelet lists its 50 largest images; n2's lists all it has, 10.
      yield* listImages("n1", fillers(50))
      yield* listImages("n2", fillers(10))
      yield* api.create(resources.imagePullJob, job)
      yield* advance(10_000)
      expect((yield* get(resources.imagePullJob, "small", "default"))["status"]).toMatchObject({ succeeded: 2 })
      // Pulled a moment ago: the kubelet may not have listed it yet.
      expect((yield* tagOf("n1"))?.unreported).toBeUndefined()
      expect(yield* condition).toBeUndefined()
      yield* advance(120_000, 5000)
      expect(yield* tagOf("n1")).toMatchObject({ phase: "Succeeded", unreported: true })
      expect((yield* tagOf("n2"))?.unreported).toBeUndefined()
      const held = yield* condition
      expect(held).toMatchObject({ status: "True", reason: "NodeStatusImagesFull" })
      expect(held?.message).toBe(
        '"registry.example.com/team/small:1" is on n1 but its Node status.images leaves it out (a kubelet lists only a node\'s ' +
          "largest images): the scheduler's ImageLocality plugin does not count it there; raise the kubelets' nodeStatusMaxImages " +
          "(-1: no limit) to have it counted"
      )
      expect(yield* warnings).toEqual([
        { message: expect.stringContaining("is on 1 node (n1) but its Node status.images leaves it out"), count: 1 }
      ])
      // The nodes' lists move, the image still left out: no second Warning.
      yield* listImages("n1", fillers(51).slice(1))
      yield* advance(30_000, 5000)
      expect((yield* condition)?.status).toBe("True")
      expect(yield* warnings).toEqual([expect.objectContaining({ count: 1 })])
      // n1's kubelet lists it now (its cap raised): the mark goes, False, and no Warning for that.
      yield* listImages("n1", [...fillers(50), `${image}:1`])
      yield* advance(10_000)
      expect((yield* tagOf("n1"))?.unreported).toBeUndefined()
      expect(yield* condition).toMatchObject({
        status: "False",
        reason: "ListedByNodes",
        message: "every node that pulled the image lists it in status.images"
      })
      expect(yield* warnings).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("daemons told nodeStatusMaxImages -1 (kubelets list every image): never said", () =>
    Effect.gen(function* () {
      yield* startCluster(["n1"], -1)
      const api = yield* KubeApi
      yield* listImages("n1", fillers(60))
      yield* api.create(resources.imagePullJob, job)
      yield* advance(200_000, 5000)
      expect((yield* tagOf("n1"))?.phase).toBe("Succeeded")
      expect((yield* tagOf("n1"))?.unreported).toBeUndefined()
      expect(yield* condition).toBeUndefined()
      expect(yield* warnings).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
