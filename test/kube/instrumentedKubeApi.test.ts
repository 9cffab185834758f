import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { AlreadyExists, Conflict, Forbidden, Gone, NotFound } from "../../src/kube/errors.ts"
import { apiWriteCount, withApiMetrics } from "../../src/kube/instrumentedKubeApi.ts"
import { KubeApi, type KubeObject } from "../../src/kube/KubeApi.ts"
import { type Resource, resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"

/**
 * Just enough of an API server to produce each outcome: objects by kind/namespace/name with a
 * resourceVersion; a watch replays the stored objects and then ends with Gone; Secrets are
 * forbidden, as for the daemon outside its namespace.
 */
const fakeKubeApi = Layer.sync(KubeApi, () => {
  const objects = new Map<string, KubeObject>()
  let version = 0
  const keyOf = (resource: Resource, name: string, namespace?: string) => `${resource.kind}/${namespace ?? ""}/${name}`
  const target = (resource: Resource, name: string) => ({ kind: resource.kind, objectName: name })
  const store = (resource: Resource, object: KubeObject) => {
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(++version) } }
    objects.set(keyOf(resource, object.metadata.name ?? "", object.metadata.namespace), stored)
    return stored
  }
  return KubeApi.of({
    get: (resource, key) => {
      if (resource.kind === "Secret") {
        return Effect.fail(new Forbidden({ ...target(resource, key.name), verb: "get", message: "not in this namespace" }))
      }
      const object = objects.get(keyOf(resource, key.name, key.namespace))
      return object ? Effect.succeed(object) : Effect.fail(new NotFound(target(resource, key.name)))
    },
    list: (resource) =>
      Effect.succeed({
        items: [...objects.values()].filter((o) => o.kind === resource.kind),
        resourceVersion: String(version)
      }),
    watch: (resource) =>
      Stream.fromIterable([...objects.values()].filter((o) => o.kind === resource.kind)).pipe(
        Stream.map((object) => ({ type: "ADDED" as const, object })),
        Stream.concat(Stream.fail(new Gone({ kind: resource.kind, message: "too old resource version" })))
      ),
    create: (resource, object) => {
      const name = object.metadata.name ?? ""
      return objects.has(keyOf(resource, name, object.metadata.namespace))
        ? Effect.fail(new AlreadyExists(target(resource, name)))
        : Effect.succeed(store(resource, { ...object, kind: resource.kind }))
    },
    update: (resource, object) => {
      const name = object.metadata.name ?? ""
      const current = objects.get(keyOf(resource, name, object.metadata.namespace))
      if (!current) return Effect.fail(new NotFound(target(resource, name)))
      if (current.metadata.resourceVersion !== object.metadata.resourceVersion) {
        return Effect.fail(new Conflict({ ...target(resource, name), message: "the object has been modified" }))
      }
      return Effect.succeed(store(resource, object))
    },
    patch: (resource, key, patch) => {
      const current = objects.get(keyOf(resource, key.name, key.namespace))
      return current
        ? Effect.succeed(store(resource, { ...current, ...patch, metadata: current.metadata }))
        : Effect.fail(new NotFound(target(resource, key.name)))
    },
    delete: (resource, key) => {
      const id = keyOf(resource, key.name, key.namespace)
      const current = objects.get(id)
      if (current === undefined) return Effect.fail(new NotFound(target(resource, key.name)))
      objects.delete(id)
      return Effect.succeed(current)
    }
  })
})

const apiLayer = withApiMetrics(fakeKubeApi).pipe(Layer.provideMerge(Metrics.layerTest))

const requests = (labels: { verb?: string; kind?: string; result?: string }) =>
  Effect.flatMap(Effect.service(Metrics), (metrics) =>
    metrics.read("preheat_api_requests_total", Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== undefined)))
  )

const node1: KubeObject = { apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: "node-1" } }

describe("instrumented KubeApi", () => {
  it.effect("counts each call by verb, kind and result, the status subresource as kind/status", () =>
    Effect.gen(function* () {
      const kube = yield* KubeApi
      const created = yield* kube.create(resources.nodeImage, node1)
      yield* kube.create(resources.nodeImage, node1).pipe(Effect.flip) // AlreadyExists
      yield* kube.get(resources.nodeImage, { name: "node-1" })
      yield* kube.get(resources.nodeImage, { name: "node-2" }).pipe(Effect.flip) // NotFound
      yield* kube.get(resources.secret, { name: "regcred", namespace: "apps" }).pipe(Effect.flip) // Forbidden
      yield* kube.list(resources.nodeImage)
      const updated = yield* kube.update(resources.nodeImage, { ...created, spec: { images: {} } })
      const conflict = yield* kube.update(resources.nodeImage, created).pipe(Effect.flip) // stale resourceVersion
      expect(conflict._tag).toBe("Conflict")
      yield* kube.update(resources.nodeImage, { ...updated, status: { desired: 0 } }, "status")
      yield* kube.patch(resources.nodeImage, { name: "node-1" }, { status: { pulling: 0 } }, "status")
      yield* kube.patch(resources.nodeImage, { name: "node-1" }, { metadata: { labels: { a: "b" } } })
      yield* kube.patch(resources.nodeImage, { name: "node-9" }, {}, "status").pipe(Effect.flip) // NotFound
      yield* kube.delete(resources.nodeImage, { name: "node-1" })
      yield* kube.delete(resources.nodeImage, { name: "node-1" }).pipe(Effect.flip) // NotFound

      const counts = {
        "create NodeImage ok": yield* requests({ verb: "create", kind: "NodeImage", result: "ok" }),
        "create NodeImage already_exists": yield* requests({ verb: "create", kind: "NodeImage", result: "already_exists" }),
        "get NodeImage ok": yield* requests({ verb: "get", kind: "NodeImage", result: "ok" }),
        "get NodeImage not_found": yield* requests({ verb: "get", kind: "NodeImage", result: "not_found" }),
        "get Secret forbidden": yield* requests({ verb: "get", kind: "Secret", result: "forbidden" }),
        "list NodeImage ok": yield* requests({ verb: "list", kind: "NodeImage", result: "ok" }),
        "update NodeImage ok": yield* requests({ verb: "update", kind: "NodeImage", result: "ok" }),
        "update NodeImage conflict": yield* requests({ verb: "update", kind: "NodeImage", result: "conflict" }),
        "update NodeImage/status ok": yield* requests({ verb: "update", kind: "NodeImage/status", result: "ok" }),
        "patch NodeImage/status ok": yield* requests({ verb: "patch", kind: "NodeImage/status", result: "ok" }),
        "patch NodeImage/status not_found": yield* requests({ verb: "patch", kind: "NodeImage/status", result: "not_found" }),
        "patch NodeImage ok": yield* requests({ verb: "patch", kind: "NodeImage", result: "ok" }),
        "delete NodeImage ok": yield* requests({ verb: "delete", kind: "NodeImage", result: "ok" }),
        "delete NodeImage not_found": yield* requests({ verb: "delete", kind: "NodeImage", result: "not_found" })
      }
      expect(
        Object.values(counts).every((count) => count === 1),
        JSON.stringify(counts)
      ).toBe(true)
      expect(yield* requests({})).toBe(14)
    }).pipe(Effect.provide(apiLayer))
  )

  it.effect("a watch counts once when it ends: by its error, or ok when the consumer stops it", () =>
    Effect.gen(function* () {
      const kube = yield* KubeApi
      yield* kube.create(resources.nodeImage, node1)
      yield* kube.create(resources.nodeImage, { ...node1, metadata: { name: "node-2" } })
      const watch = kube.watch(resources.nodeImage, { resourceVersion: "0" })

      const error = yield* Stream.runDrain(watch).pipe(Effect.flip)
      expect(error._tag).toBe("Gone")
      expect(yield* requests({ verb: "watch", kind: "NodeImage", result: "gone" })).toBe(1)

      const first = yield* Stream.runCollect(Stream.take(watch, 1))
      expect(first).toHaveLength(1)
      expect(yield* requests({ verb: "watch", kind: "NodeImage", result: "ok" })).toBe(1)
      expect(yield* requests({ verb: "watch" })).toBe(2)
    }).pipe(Effect.provide(apiLayer))
  )

  it.effect("apiWriteCount reads create, update and patch (any result) from the metric itself", () =>
    Effect.gen(function* () {
      const kube = yield* KubeApi
      expect(yield* apiWriteCount).toBe(0)
      const created = yield* kube.create(resources.nodeImage, node1)
      yield* kube.update(resources.nodeImage, created)
      yield* kube.update(resources.nodeImage, created).pipe(Effect.flip) // a conflict is still a write request
      yield* kube.patch(resources.nodeImage, { name: "node-1" }, { status: {} }, "status")
      yield* kube.get(resources.nodeImage, { name: "node-1" })
      yield* kube.list(resources.nodeImage)
      yield* kube.delete(resources.nodeImage, { name: "node-1" })
      expect(yield* apiWriteCount).toBe(4)
    }).pipe(Effect.provide(apiLayer))
  )

  it.effect("wraps the in-memory API server: conflicts, not-found and a watch answered Gone", () =>
    Effect.gen(function* () {
      const kube = yield* KubeApi
      const created = yield* kube.create(resources.nodeImage, node1)
      const updated = yield* kube.update(resources.nodeImage, { ...created, spec: { images: {} } })
      yield* kube.update(resources.nodeImage, created).pipe(Effect.flip)
      yield* kube.patch(resources.nodeImage, { name: "node-1" }, { status: { desired: 0 } }, "status")
      yield* kube.get(resources.nodeImage, { name: "node-2" }).pipe(Effect.flip)
      yield* kube.update(resources.nodeImage, { ...updated, metadata: { ...updated.metadata, labels: { a: "b" } } }).pipe(Effect.flip)
      // With a history of one event, resuming from the first write is too old.
      const gone = yield* Stream.runDrain(kube.watch(resources.nodeImage, { resourceVersion: created.metadata.resourceVersion! })).pipe(
        Effect.flip
      )
      expect(gone._tag).toBe("Gone")

      expect(yield* requests({ verb: "update", kind: "NodeImage", result: "ok" })).toBe(1)
      expect(yield* requests({ verb: "update", kind: "NodeImage", result: "conflict" })).toBe(2)
      expect(yield* requests({ verb: "patch", kind: "NodeImage/status", result: "ok" })).toBe(1)
      expect(yield* requests({ verb: "get", kind: "NodeImage", result: "not_found" })).toBe(1)
      expect(yield* requests({ verb: "watch", kind: "NodeImage", result: "gone" })).toBe(1)
      expect(yield* apiWriteCount).toBe(5)
    }).pipe(Effect.provide(withApiMetrics(InMemoryKubeApi.layerWith({ historyLimit: 1 })).pipe(Layer.provideMerge(Metrics.layerTest))))
  )

  it.effect("counts a JSON patch whose test failed as a conflict, one that cannot apply as invalid", () =>
    Effect.gen(function* () {
      const kube = yield* KubeApi
      yield* kube.create(resources.nodeImage, node1)
      const stale = yield* kube
        .patch(resources.nodeImage, { name: "node-1" }, [{ op: "test", path: "/metadata/generation", value: 0 }])
        .pipe(Effect.flip)
      expect(stale._tag).toBe("Conflict")
      // A path whose parent is missing: not a precondition, a patch that cannot apply.
      yield* kube.patch(resources.nodeImage, { name: "node-1" }, [{ op: "add", path: "/spec/images/x/y", value: 1 }]).pipe(Effect.flip)
      expect(yield* requests({ verb: "patch", kind: "NodeImage", result: "conflict" })).toBe(1)
      expect(yield* requests({ verb: "patch", kind: "NodeImage", result: "invalid" })).toBe(1)
    }).pipe(Effect.provide(withApiMetrics(InMemoryKubeApi.layer).pipe(Layer.provideMerge(Metrics.layerTest))))
  )
})
