// ImageUnreported end to end on the in-memory API server with simulated daemons, on TestClock
// (issue 39): a job's image pulled on a node whose kubelet lists its 50 largest images, the job's
// not among them, gets the condition and one Warning once the kubelet had time to list it; a node
// listing fewer is only late; once listed the condition turns False.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"

const job: KubeObject = {
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name: "small", namespace: "default" },
  spec: { image: "registry.example.com/team/small:1", parallelism: 10, completionPolicy: { type: "Never" } }
}

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

interface Condition {
  readonly type: string
  readonly status: string
  readonly reason?: string
  readonly message?: string
}
const conditionOf = (object: KubeObject) =>
  ((object["status"] as { conditions?: ReadonlyArray<Condition> } | undefined)?.conditions ?? []).find((c) => c.type === "ImageUnreported")

const warnings = Effect.gen(function* () {
  const api = yield* KubeApi
  const events = yield* api.list(resources.event, { namespace: "default" })
  return events.items
    .filter((e) => e["reason"] === "ImageUnreported")
    .map((e) => ({ message: String(e["message"]), count: e["count"] ?? 1 }))
})

describe("ImageUnreported, on an in-memory cluster", () => {
  it.effect("said of the nodes whose full list leaves the image out, once the kubelet had time; False once listed", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 2000 })
      const api = yield* KubeApi
      // n1's kubelet lists its 50 largest images; n2's lists all it has, 10.
      yield* listImages("n1", fillers(50))
      yield* listImages("n2", fillers(10))
      yield* api.create(resources.imagePullJob, job)
      yield* advance(10_000)
      expect((yield* get(resources.imagePullJob, "small", "default"))["status"]).toMatchObject({ succeeded: 2 })
      // Pulled a moment ago: the kubelet may not have listed it yet.
      expect(conditionOf(yield* get(resources.imagePullJob, "small", "default"))).toBeUndefined()
      yield* advance(120_000, 5000)
      const held = conditionOf(yield* get(resources.imagePullJob, "small", "default"))
      expect(held).toMatchObject({ status: "True", reason: "NodeStatusImagesFull" })
      expect(held?.message).toBe(
        '"registry.example.com/team/small:1" is on n1 but its Node status.images leaves it out (a kubelet lists a node\'s 50 ' +
          "largest images): the scheduler's ImageLocality plugin does not count it there; raise the kubelets' nodeStatusMaxImages " +
          "(-1: no limit) to have it counted"
      )
      expect(yield* warnings).toEqual([
        { message: expect.stringContaining("is on 1 node (n1) but its Node status.images leaves it out"), count: 1 }
      ])
      // The job goes on being reconciled (its status written), the nodes' lists move: no second Warning.
      yield* listImages("n1", fillers(51).slice(1))
      yield* advance(30_000, 5000)
      expect(conditionOf(yield* get(resources.imagePullJob, "small", "default"))?.status).toBe("True")
      expect(yield* warnings).toEqual([expect.objectContaining({ count: 1 })])
      // n1's kubelet lists it now (its cap raised): False, and no Warning for that.
      yield* listImages("n1", [...fillers(50), "registry.example.com/team/small:1"])
      yield* advance(10_000)
      expect(conditionOf(yield* get(resources.imagePullJob, "small", "default"))).toMatchObject({
        status: "False",
        reason: "ListedByNodes",
        message: "every node that pulled the image lists it in status.images"
      })
      expect(yield* warnings).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("nodeStatusMaxImages -1 (kubelets list every image): never said", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 2000 }, { nodeStatusMaxImages: -1 })
      const api = yield* KubeApi
      yield* listImages("n1", fillers(60))
      yield* api.create(resources.imagePullJob, job)
      yield* advance(200_000, 5000)
      expect(conditionOf(yield* get(resources.imagePullJob, "small", "default"))).toBeUndefined()
      expect(yield* warnings).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
