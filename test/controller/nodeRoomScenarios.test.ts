/**
 * A NodeImage holds at most 256 images (upstream's rule, enforced by admission). With more jobs
 * than that on a node, the jobs past the 256th wait for room there, saying so in their status,
 * instead of writing specs the API server refuses (in a separate-process run of 500 jobs on 3
 * nodes that was 12,942 refused full-size writes in 5 minutes); room made on the node wakes them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { maxNodeImages } from "../../src/api/nodeImage.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"

const job = (name: string, image: string): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { image, completionPolicy: { type: "Never" } }
})

const status = (o: KubeObject) => (o["status"] ?? {}) as { succeeded?: number; message?: string }

describe("room on a node", () => {
  it.effect("a job past the 256th image on a node waits for room, says so, and pulls once a tag is released", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 100 })
      const api = yield* KubeApi
      for (let i = 0; i < maxNodeImages; i++)
        yield* api.create(resources.imagePullJob, job(`fill-${i}`, `registry.example.com/fill-${i}:v1`))
      yield* advance(5000, 100)
      const images = () =>
        Effect.map(get(resources.nodeImage, "n1"), (n) => Object.keys((n["spec"] as { images?: object }).images ?? {}).length)
      expect(yield* images()).toBe(maxNodeImages)
      yield* api.create(resources.imagePullJob, job("late", "registry.example.com/late:v1"))
      yield* advance(5000, 100)
      const waiting = yield* get(resources.imagePullJob, "late", "default")
      expect(status(waiting).message).toBe("job is running, progress 0.0%, 1 node has no room for another image (256 at most)")
      expect(yield* images()).toBe(maxNodeImages)
      // One job goes, its image with it: the late one is woken by the NodeImage's change and pulls.
      yield* api.delete(resources.imagePullJob, { name: "fill-0", namespace: "default" })
      yield* advance(5000, 100)
      const pulled = yield* get(resources.imagePullJob, "late", "default")
      expect(status(pulled)).toMatchObject({ succeeded: 1, message: "job is running, progress 100.0%" })
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
