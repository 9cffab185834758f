import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ImagePullJobStatus } from "../../src/api/imagePullJob.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"

const a = `sha256:${"a".repeat(64)}`
const b = `sha256:${"b".repeat(64)}`

const status = (o: KubeObject) => o["status"] as ImagePullJobStatus
const condition = (o: KubeObject, type: string) => status(o).conditions?.find((c) => c.type === type)

describe("digest consistency on the in-memory cluster", () => {
  it.effect("a tag moved mid-job: DigestMismatch with one Warning; a new generation (Always) converges every node", () =>
    Effect.gen(function* () {
      // The registry: what nginx:latest names now.
      let current = a
      const nodes = ["n1", "n2", "n3", "n4"]
      const { pulls } = yield* startCluster(
        nodes.map((n) => readyNode(n)),
        { pullMs: 5000, digest: () => current }
      )
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImagePullJob",
        metadata: { name: "latest", namespace: "default" },
        spec: { image: "nginx:latest", parallelism: 2, imagePullPolicy: "Always" }
      })
      yield* advance(3000)
      // n1 and n2 are pulling: the tag moves under them, so n3 and n4 resolve it to b.
      current = b
      yield* advance(20_000)
      const mixed = yield* get(resources.imagePullJob, "latest", "default")
      expect(status(mixed)).toMatchObject({ succeeded: 4, message: "job has completed" })
      expect(status(mixed).imageDigests).toEqual([
        { digest: a, nodes: 2 },
        { digest: b, nodes: 2 }
      ])
      const mismatch = condition(mixed, "DigestMismatch")
      expect(mismatch).toMatchObject({ status: "True", reason: "TagMoved" })
      // Each digest with the nodes that resolved it (which two went first depends on the job's target order).
      const byDigest = new Map<string, Array<string>>()
      for (const n of nodes) {
        const node = yield* get(resources.nodeImage, n)
        const tags = (node["status"] as { imageStatuses: Record<string, { tags: Array<{ digest?: string }> }> }).imageStatuses["nginx"]
        const digest = tags?.tags[0]?.digest ?? "none"
        byDigest.set(digest, [...(byDigest.get(digest) ?? []), n])
      }
      expect([...byDigest.keys()].sort()).toEqual([a, b])
      for (const [digest, named] of byDigest) {
        expect(mismatch?.message).toMatch(new RegExp(`${digest} on (${named.join(", ")}|${[...named].reverse().join(", ")})(;|$)`))
      }
      const warnings = () =>
        Effect.map(api.list(resources.event, { namespace: "default" }), (list) =>
          list.items.filter((e) => e["reason"] === "DigestMismatch")
        )
      // Once, however many reconciles saw the two digests.
      expect(yield* warnings()).toHaveLength(1)

      // An edit of the job is a new generation: with imagePullPolicy Always every node pulls again.
      yield* api.patch(resources.imagePullJob, { name: "latest", namespace: "default" }, { spec: { parallelism: 3 } })
      yield* advance(30_000)
      const converged = yield* get(resources.imagePullJob, "latest", "default")
      expect(status(converged)).toMatchObject({ succeeded: 4, failed: 0, message: "job has completed", observedGeneration: 2 })
      expect(status(converged).imageDigests).toEqual([{ digest: b, nodes: 4 }])
      expect(condition(converged, "DigestMismatch")).toMatchObject({ status: "False", reason: "OneDigest" })
      expect(condition(converged, "Complete")).toMatchObject({ status: "True" })
      expect(nodes.map((n) => pulls.get(`${n}/nginx:latest`))).toEqual([2, 2, 2, 2])
      expect(yield* warnings()).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
