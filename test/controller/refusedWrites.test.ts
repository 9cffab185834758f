// A NodeImage write the API server refuses (422): the in-memory cluster admits writes as a real
// server with the CRDs does, so a NodeImage stored before the schema's rules (here: past
// admission) refuses every change of its image map, whose rules fail on the old part.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode, startCluster, unadmitted } from "../support/controllerHarness.ts"

const job: KubeObject = {
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name: "both", namespace: "default" },
  spec: { image: "redis:7", parallelism: 2 }
}

describe("a NodeImage write the API server refuses", () => {
  it.effect("is a Warning on the job naming the node and the server's causes, retried with backoff; the other node completes", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 1000 })
      const api = yield* KubeApi
      yield* (yield* unadmitted).patch(resources.nodeImage, { name: "n1" }, { spec: { images: { busybox: { tags: "x" } } } })
      yield* api.create(resources.imagePullJob, job)
      yield* advance(5000)
      const status = (yield* get(resources.imagePullJob, "both", "default"))["status"]
      // n2 pulled; n1 is still to do: the job's status is written all the same.
      expect(status).toMatchObject({ desired: 2, succeeded: 1, active: 1 })
      const refusals = () =>
        Effect.map(api.list(resources.event, { namespace: "default" }), ({ items }) =>
          items.filter((e) => e["reason"] === "FailedUpdateNodeImage")
        )
      const [refused] = yield* refusals()
      expect(refused).toMatchObject({ type: "Warning", involvedObject: { kind: "ImagePullJob", name: "both" } })
      // busybox's tags are as they were (not validated again), but the image map's rules run over them.
      expect(refused?.["message"]).toMatch(
        /^failed to update NodeImage n1: NodeImage n1 is invalid: spec\.images: Invalid value: "object": rule evaluation error: /
      )
      // Ten minutes on: retried after a doubling delay (5 ms to 1000 s), not at every wake-up.
      yield* advance(600_000, 10_000)
      const [later] = yield* refusals()
      expect(later?.["count"]).toBeGreaterThan(1)
      expect(later?.["count"]).toBeLessThanOrEqual(25)
      expect((yield* get(resources.nodeImage, "n1"))["spec"]).toEqual({ images: { busybox: { tags: "x" } } })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
