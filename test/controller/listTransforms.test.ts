// The controller's Node and NodeImage lists are cut to what their stores keep as each page arrives
// (ListOptions.transform; the live client applies it page by page: test/layers/kube/live/kubeLive.test.ts).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { SchedulerLive } from "../../layers/scheduler.ts"
import { makeController } from "../../src/controller/controller.ts"
import { nodeImageAsRead } from "../../src/controller/nodeImage/asRead.ts"
import { nodeAsRead } from "../../src/controller/nodeFields.ts"
import { defaultSettings } from "../../src/controller/settings.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { readyNode } from "../support/controllerHarness.ts"

/** The transform each kind's list was asked with, by plural. */
const listedWith = new Map<string, ((object: KubeObject) => KubeObject) | undefined>()
const recordingLists = Layer.effect(
  KubeApi,
  Effect.map(Effect.service(KubeApi), (api) =>
    KubeApi.of({
      ...api,
      list: (resource, options) => {
        listedWith.set(resource.plural, options?.transform)
        return api.list(resource, options)
      }
    })
  )
).pipe(Layer.provideMerge(InMemoryKubeApi.layerWith()), Layer.merge(SchedulerLive.layer()))

const annotated: KubeObject = {
  ...readyNode("n1"),
  metadata: { ...readyNode("n1").metadata, annotations: { "node.alpha.kubernetes.io/ttl": "0" } }
}
const reported: KubeObject = {
  metadata: { name: "n1" },
  spec: {},
  status: {
    firstSyncStatus: { status: "Succeeded" },
    imageStatuses: { nginx: { tags: [{ tag: "1.25", phase: "Succeeded", imageID: "sha256:0123", message: "pulled" }] } }
  }
}

describe("the controller's lists", () => {
  it.effect("of Nodes and NodeImages keep each item as their stores do", () =>
    Effect.gen(function* () {
      const controller = yield* makeController(defaultSettings)
      yield* Effect.forkScoped(controller.reconcile())
      yield* Effect.eventually(Effect.suspend(() => (listedWith.has("nodeimages") ? Effect.void : Effect.fail("not listed yet"))))
      const nodes = listedWith.get("nodes")
      const nodeImages = listedWith.get("nodeimages")
      expect(nodes?.(annotated)).toEqual(nodeAsRead(annotated))
      expect(nodes?.(annotated).metadata).not.toHaveProperty("annotations")
      expect(nodeImages?.(reported)).toEqual(nodeImageAsRead(reported))
      expect(nodeImages?.(reported)["status"]).not.toHaveProperty("firstSyncStatus")
    }).pipe(Effect.scoped, Effect.provide(recordingLists))
  )
})
