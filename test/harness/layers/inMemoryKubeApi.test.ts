import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Stream } from "effect"
import type { Scope } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { InMemoryKubeApi, InMemoryKubeStore } from "../../../harness/layers/inMemoryKubeApi.ts"
import type { InMemoryKubeApiOptions } from "../../../harness/layers/inMemoryKubeApi.ts"
import { KubeApi } from "../../../src/kube/KubeApi.ts"
import type { KubeObject, WatchEvent } from "../../../src/kube/KubeApi.ts"
import { Unavailable } from "../../../src/kube/errors.ts"
import { resources } from "../../../src/kube/resources.ts"
import { kubeApiConformance } from "../../kube/conformance.ts"

kubeApiConformance("in memory", InMemoryKubeApi.layer)

const kruise = "apps.kruise.io/v1alpha1"
const ns = "default"

const job = (name: string, extra: Partial<KubeObject> & { readonly finalizers?: ReadonlyArray<string> } = {}): KubeObject => {
  const { finalizers, ...rest } = extra
  return {
    apiVersion: kruise,
    kind: "ImagePullJob",
    spec: { image: "nginx:1.25" },
    ...rest,
    metadata: { name, namespace: ns, ...(finalizers === undefined ? {} : { finalizers }), ...rest.metadata }
  }
}

const listJob = (name: string): KubeObject => ({
  apiVersion: kruise,
  kind: "ImageListPullJob",
  metadata: { name, namespace: ns },
  spec: { images: ["nginx:1.25"] }
})

const ownedBy = (...owners: ReadonlyArray<KubeObject>) =>
  owners.map((o) => ({ apiVersion: kruise, kind: o.kind ?? "", name: o.metadata.name ?? "", uid: o.metadata.uid ?? "" }))

/** Runs a test body against a fresh in-memory server (with the test's TestClock). */
const withServer = <A, E>(body: Effect.Effect<A, E, KubeApi | InMemoryKubeStore | Scope.Scope>, options: InMemoryKubeApiOptions = {}) =>
  body.pipe(Effect.provide(InMemoryKubeApi.layerWith(options)))

const summary = (events: ReadonlyArray<WatchEvent>): Array<string> =>
  events.map((e) => (e.type === "BOOKMARK" ? `BOOKMARK ${e.resourceVersion}` : `${e.type} ${e.object.metadata.name ?? ""}`))

describe("in-memory KubeApi", () => {
  it.effect("timestamps come from the Clock, in whole seconds", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        yield* TestClock.setTime(Date.parse("2030-05-06T07:08:09.876Z"))
        const created = yield* api.create(resources.imagePullJob, job("held", { finalizers: ["preheat.test/hold"] }))
        assert.strictEqual(created.metadata.creationTimestamp, "2030-05-06T07:08:09Z")
        yield* TestClock.adjust("65 seconds")
        yield* api.delete(resources.imagePullJob, { name: "held", namespace: ns })
        const marked = yield* api.get(resources.imagePullJob, { name: "held", namespace: ns })
        assert.strictEqual(marked.metadata.deletionTimestamp, "2030-05-06T07:09:14Z")
        assert.strictEqual(marked.metadata.deletionGracePeriodSeconds, 0)
        assert.strictEqual(marked.metadata.generation, 2)
        assert.strictEqual(marked.metadata.creationTimestamp, "2030-05-06T07:08:09Z")
        // A second delete of an object already being deleted changes nothing.
        yield* api.delete(resources.imagePullJob, { name: "held", namespace: ns })
        const again = yield* api.get(resources.imagePullJob, { name: "held", namespace: ns })
        assert.strictEqual(again, marked)
      })
    )
  )

  it.effect("a watch from a resourceVersion older than the kept history is Gone", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const store = yield* InMemoryKubeStore
        const start = yield* api.list(resources.imagePullJob)
        yield* api.create(resources.imagePullJob, job("a"))
        for (let i = 2; i <= 4; i++) yield* api.patch(resources.imagePullJob, { name: "a", namespace: ns }, { spec: { parallelism: i } })
        const gone = yield* Effect.flip(
          api.watch(resources.imagePullJob, { resourceVersion: start.resourceVersion }).pipe(Stream.runCollect)
        )
        assert.strictEqual(gone._tag, "Gone")

        // Other kinds keep their own history, and the last three events of this one are still there.
        const now = yield* api.list(resources.imagePullJob)
        const recent = yield* api
          .watch(resources.imagePullJob, { resourceVersion: String(Number(now.resourceVersion) - 3) })
          .pipe(Stream.take(3), Stream.runCollect)
        assert.deepStrictEqual(summary(recent), ["MODIFIED a", "MODIFIED a", "MODIFIED a"])
        const otherKind = yield* api
          .watch(resources.nodeImage, { resourceVersion: start.resourceVersion })
          .pipe(Stream.take(1), Stream.runCollect, Effect.forkChild)
        yield* api.create(resources.nodeImage, { apiVersion: kruise, kind: "NodeImage", metadata: { name: "n" }, spec: {} })
        assert.deepStrictEqual(summary(yield* Fiber.join(otherKind)), ["ADDED n"])

        // A compaction forgets everything before now.
        yield* store.compact
        const afterCompaction = yield* Effect.flip(
          api.watch(resources.nodeImage, { resourceVersion: start.resourceVersion }).pipe(Stream.runCollect)
        )
        assert.strictEqual(afterCompaction._tag, "Gone")
      }),
      { historyLimit: 3 }
    )
  )

  it.effect("a watch that falls behind the kept history is Gone", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const start = yield* api.list(resources.imagePullJob)
        const pull = yield* Stream.toPull(api.watch(resources.imagePullJob, { resourceVersion: start.resourceVersion }))
        yield* api.create(resources.imagePullJob, job("a"))
        assert.deepStrictEqual(summary(yield* pull), ["ADDED a"])
        for (let i = 2; i <= 5; i++) yield* api.patch(resources.imagePullJob, { name: "a", namespace: ns }, { spec: { parallelism: i } })
        const error = yield* Effect.flip(pull)
        assert.strictEqual((error as { _tag?: string })._tag, "Gone")
      }),
      { historyLimit: 3 }
    )
  )

  it.effect("a watch of one object by name is not Gone because other objects churned", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const store = yield* InMemoryKubeStore
        const nodeImage = (name: string): KubeObject => ({ apiVersion: kruise, kind: "NodeImage", metadata: { name }, spec: {} })
        yield* api.create(resources.nodeImage, nodeImage("mine"))
        yield* api.create(resources.nodeImage, nodeImage("busy"))
        const pull = yield* Stream.toPull(api.watch(resources.nodeImage, { fieldSelector: "metadata.name=mine", resourceVersion: "0" }))
        assert.deepStrictEqual(summary(yield* pull), ["ADDED mine"])
        assert.strictEqual(yield* store.openWatches, 1)
        for (let i = 0; i < 10; i++) yield* api.patch(resources.nodeImage, { name: "busy" }, { metadata: { labels: { n: String(i) } } })
        yield* api.patch(resources.nodeImage, { name: "mine" }, { status: { desired: 1 } }, "status")
        assert.deepStrictEqual(summary(yield* pull), ["MODIFIED mine"])
      }),
      { historyLimit: 3 }
    )
  )

  it.effect("a watch is released when its consumer stops", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const store = yield* InMemoryKubeStore
        yield* api.create(resources.imagePullJob, job("a"))
        const first = yield* api.watch(resources.imagePullJob, { resourceVersion: "0" }).pipe(Stream.take(1), Stream.runCollect)
        assert.deepStrictEqual(summary(first), ["ADDED a"])
        assert.strictEqual(yield* store.openWatches, 0)
      })
    )
  )

  it.effect("an idle watch gets a BOOKMARK every interval, with the resourceVersion it has reached", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const start = yield* api.list(resources.imagePullJob)
        const watching = yield* api
          .watch(resources.imagePullJob, { resourceVersion: start.resourceVersion })
          .pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
        yield* TestClock.adjust("9 seconds")
        const created = yield* api.create(resources.imagePullJob, job("a"))
        yield* api.create(resources.nodeImage, { apiVersion: kruise, kind: "NodeImage", metadata: { name: "n" }, spec: {} })
        yield* TestClock.adjust("1 second")
        yield* TestClock.adjust("10 seconds")
        const events = yield* Fiber.join(watching)
        // The second bookmark has passed the NodeImage's resourceVersion: nothing of this kind before it.
        assert.deepStrictEqual(summary(events), [
          "ADDED a",
          `BOOKMARK ${Number(created.metadata.resourceVersion) + 1}`,
          `BOOKMARK ${Number(created.metadata.resourceVersion) + 1}`
        ])
      }),
      { bookmarkInterval: "10 seconds" }
    )
  )

  it.effect("deleting an owner deletes a dependent that has a finalizer only once it is released", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const parent = yield* api.create(resources.imageListPullJob, listJob("parent"))
        const child = yield* api.create(
          resources.imagePullJob,
          job("child", {
            metadata: { name: "child", namespace: ns, ownerReferences: ownedBy(parent) },
            finalizers: ["preheat.test/hold"]
          })
        )
        const grandchild = yield* api.create(
          resources.imagePullJob,
          job("grandchild", {
            metadata: { name: "grandchild", namespace: ns, ownerReferences: ownedBy(child) }
          })
        )
        yield* api.delete(resources.imageListPullJob, { name: "parent", namespace: ns })
        assert.strictEqual((yield* Effect.flip(api.get(resources.imageListPullJob, { name: "parent", namespace: ns })))._tag, "NotFound")
        const held = yield* api.get(resources.imagePullJob, { name: "child", namespace: ns })
        assert.isString(held.metadata.deletionTimestamp)
        // The child still exists, so its own dependent stays.
        yield* api.get(resources.imagePullJob, { name: "grandchild", namespace: ns })

        yield* api.patch(resources.imagePullJob, { name: "child", namespace: ns }, { metadata: { finalizers: [] } })
        const items = (yield* api.list(resources.imagePullJob)).items
        assert.deepStrictEqual(
          items.map((o) => o.metadata.name),
          []
        )
        assert.notStrictEqual(grandchild.metadata.uid, child.metadata.uid)
      })
    )
  )

  it.effect("a dependent with another live owner only loses the reference to the deleted one", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const first = yield* api.create(resources.imageListPullJob, listJob("first"))
        const second = yield* api.create(resources.imageListPullJob, listJob("second"))
        yield* api.create(
          resources.imagePullJob,
          job("shared", {
            metadata: { name: "shared", namespace: ns, ownerReferences: ownedBy(first, second) }
          })
        )
        yield* api.delete(resources.imageListPullJob, { name: "first", namespace: ns })
        const shared = yield* api.get(resources.imagePullJob, { name: "shared", namespace: ns })
        assert.deepStrictEqual(
          shared.metadata.ownerReferences?.map((r) => r.name),
          ["second"]
        )
        yield* api.delete(resources.imageListPullJob, { name: "second", namespace: ns })
        assert.strictEqual((yield* Effect.flip(api.get(resources.imagePullJob, { name: "shared", namespace: ns })))._tag, "NotFound")
      })
    )
  )

  it.effect("stored objects are frozen and shared; callers' objects are not frozen", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const input = job("a", { spec: { image: "nginx:1.25", pullSecrets: ["s"] } })
        const created = yield* api.create(resources.imagePullJob, input)
        assert.isFalse(Object.isFrozen(input))
        assert.isFalse(Object.isFrozen(input.metadata))
        assert.throws(() => {
          ;(created.metadata as { name?: string }).name = "b"
        }, TypeError)
        assert.throws(() => {
          ;(created["spec"] as { pullSecrets: Array<string> }).pullSecrets.push("t")
        }, TypeError)
        const got = yield* api.get(resources.imagePullJob, { name: "a", namespace: ns })
        const listed = yield* api.list(resources.imagePullJob)
        assert.strictEqual(got, created)
        assert.strictEqual(listed.items[0], created)

        // A write shares what it did not change with the previous version.
        const withStatus = yield* api.patch(resources.imagePullJob, { name: "a", namespace: ns }, { status: { active: 1 } }, "status")
        assert.strictEqual(withStatus["spec"], created["spec"])
        const replaced = yield* api.update(resources.imagePullJob, {
          ...structuredClone(withStatus),
          metadata: { ...structuredClone(withStatus.metadata), labels: { x: "y" } }
        })
        assert.strictEqual(replaced["spec"], created["spec"])
        assert.strictEqual(replaced["status"], withStatus["status"])
      })
    )
  )

  it.effect("invalid input is Invalid, never a throw", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const invalid = (object: unknown) =>
          api.create(resources.imagePullJob, object as KubeObject).pipe(
            Effect.flip,
            Effect.map((e) => e._tag)
          )
        assert.strictEqual(yield* invalid(null), "Invalid")
        assert.strictEqual(yield* invalid("job"), "Invalid")
        assert.strictEqual(yield* invalid({ spec: {} }), "Invalid")
        assert.strictEqual(yield* invalid({ metadata: { namespace: ns } }), "Invalid")
        assert.strictEqual(yield* invalid({ metadata: { name: "a" } }), "Invalid")
        assert.strictEqual(yield* invalid({ metadata: { name: "Upper", namespace: ns } }), "Invalid")
        assert.strictEqual(yield* invalid({ metadata: { name: "a", namespace: ns, labels: { "bad key": "v" } } }), "Invalid")
        assert.strictEqual(yield* invalid({ metadata: { name: "a", namespace: ns, resourceVersion: "5" } }), "Invalid")
        assert.strictEqual(yield* invalid({ metadata: { name: "a", namespace: ns }, spec: { f: () => 1 } }), "Invalid")
        assert.strictEqual(yield* invalid({ metadata: { name: "a", namespace: ns }, spec: { n: Number.NaN } }), "Invalid")
        const cyclic: Record<string, unknown> = {}
        cyclic.self = cyclic
        assert.strictEqual(yield* invalid({ metadata: { name: "a", namespace: ns }, spec: cyclic }), "Invalid")
        const clusterWithNamespace = yield* Effect.flip(api.create(resources.nodeImage, { metadata: { name: "n", namespace: ns } }))
        assert.strictEqual(clusterWithNamespace._tag, "Invalid")
        const patchNotObject = yield* Effect.flip(
          api
            .create(resources.imagePullJob, job("p"))
            .pipe(
              Effect.andThen(api.patch(resources.imagePullJob, { name: "p", namespace: ns }, "x" as unknown as Record<string, unknown>))
            )
        )
        assert.strictEqual(patchNotObject._tag, "Invalid")
        // Dates become their JSON form, undefined fields disappear, as over the wire.
        const dated = yield* api.create(resources.imagePullJob, {
          ...job("dated"),
          spec: { at: new Date(0), gone: undefined }
        })
        assert.deepStrictEqual(dated["spec"], { at: "1970-01-01T00:00:00.000Z" })
      }),
      // The store's own checks: admission, in front of them, would drop the unknown fields first.
      { admission: false }
    )
  )

  it.effect("built-in kinds allow unconditional updates; kinds without a status subresource have no /status", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const secret = yield* api.create(resources.secret, {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "s", namespace: ns },
          data: { a: "YQ==" },
          status: { kept: true }
        })
        const { resourceVersion: _, ...metadata } = secret.metadata
        const updated = yield* api.update(resources.secret, { ...secret, metadata, data: { b: "Yg==" } })
        assert.deepStrictEqual(updated["data"], { b: "Yg==" })
        const status = yield* Effect.flip(api.update(resources.secret, updated, "status"))
        assert.strictEqual(status._tag, "NotFound")
        // A Pod starts Pending whatever status it was created with.
        const pod = yield* api.create(resources.pod, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "p", namespace: ns },
          spec: { containers: [] },
          status: { phase: "Running" }
        })
        assert.deepStrictEqual(pod["status"], { phase: "Pending" })
      })
    )
  )

  it.effect("a bad selector is a defect (the real server answers 400)", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const badLabel = yield* Effect.exit(api.list(resources.imagePullJob, { labelSelector: "a b" }))
        assert.isTrue(Exit.isFailure(badLabel) && Cause.hasDies(badLabel.cause))
        const badField = yield* Effect.exit(api.list(resources.imagePullJob, { fieldSelector: "spec.image=x" }))
        assert.isTrue(Exit.isFailure(badField) && Cause.hasDies(badField.cause))
        const badWatch = yield* Effect.exit(
          api.watch(resources.imagePullJob, { fieldSelector: "spec.image=x", resourceVersion: "0" }).pipe(Stream.runCollect)
        )
        assert.isTrue(Exit.isFailure(badWatch) && Cause.hasDies(badWatch.cause))
      })
    )
  )

  it.effect("faults fail the requests they pick, and broken watches end with the given error", () =>
    withServer(
      Effect.gen(function* () {
        const api = yield* KubeApi
        const store = yield* InMemoryKubeStore
        yield* api.create(resources.imagePullJob, job("a"))
        yield* store.setFault(({ verb }) => (verb === "get" ? new Unavailable({ message: "injected" }) : undefined))
        assert.strictEqual((yield* Effect.flip(api.get(resources.imagePullJob, { name: "a", namespace: ns })))._tag, "Unavailable")
        yield* api.list(resources.imagePullJob)
        yield* store.setFault(undefined)
        yield* api.get(resources.imagePullJob, { name: "a", namespace: ns })

        const watching = yield* api
          .watch(resources.imagePullJob, { resourceVersion: "0" })
          .pipe(Stream.runCollect, Effect.flip, Effect.forkChild)
        yield* Effect.yieldNow
        yield* store.breakWatches(new Unavailable({ message: "connection reset" }))
        const error = yield* Fiber.join(watching)
        assert.strictEqual(error._tag, "Unavailable")
      })
    )
  )
})

// ---- property: a watch from "0" rebuilds the list -----------------------------------------------

type Operation =
  | { readonly op: "create"; readonly name: string; readonly keep: boolean; readonly finalizer: boolean }
  | { readonly op: "spec" | "status"; readonly name: string; readonly value: number }
  | { readonly op: "label"; readonly name: string; readonly keep: boolean }
  | { readonly op: "delete" | "release"; readonly name: string }

const name = fc.constantFrom("a", "b", "c", "d")
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constant("create" as const), name, keep: fc.boolean(), finalizer: fc.boolean() }),
  fc.record({ op: fc.constantFrom("spec" as const, "status" as const), name, value: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ op: fc.constant("label" as const), name, keep: fc.boolean() }),
  fc.record({ op: fc.constantFrom("delete" as const, "release" as const), name })
)

const apply = (api: KubeApi["Service"], o: Operation) => {
  const key = { name: o.name, namespace: ns }
  const labels = (keep: boolean) => ({ keep: keep ? "yes" : "no" })
  switch (o.op) {
    case "create":
      return api.create(
        resources.imagePullJob,
        job(o.name, {
          metadata: { name: o.name, namespace: ns, labels: labels(o.keep) },
          ...(o.finalizer ? { finalizers: ["preheat.test/hold"] } : {})
        })
      )
    case "spec":
      return api.patch(resources.imagePullJob, key, { spec: { parallelism: o.value } })
    case "status":
      return api.patch(resources.imagePullJob, key, { status: { active: o.value } }, "status")
    case "label":
      return api.patch(resources.imagePullJob, key, { metadata: { labels: labels(o.keep) } })
    case "delete":
      return api.delete(resources.imagePullJob, key)
    case "release":
      return api.patch(resources.imagePullJob, key, { metadata: { finalizers: null } })
  }
}

describe("watch from resourceVersion 0", () => {
  it("rebuilds exactly the final list, with or without a label selector", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { maxLength: 25 }),
        fc.array(operation, { maxLength: 25 }),
        fc.constantFrom("", "keep=yes"),
        (before, after, labelSelector) =>
          Effect.runPromise(
            withServer(
              Effect.gen(function* () {
                const api = yield* KubeApi
                for (const o of before) yield* Effect.ignore(apply(api, o))
                // An object that always matches, so that the watch's first pull has something to return.
                yield* api.create(
                  resources.imagePullJob,
                  job("start", { metadata: { name: "start", namespace: ns, labels: { keep: "yes" } } })
                )
                const pull = yield* Stream.toPull(api.watch(resources.imagePullJob, { labelSelector, resourceVersion: "0" }))
                const seen = new Map<string, KubeObject>()
                const take = Effect.map(pull, (events) => {
                  for (const e of events) {
                    if (e.type === "ADDED" || e.type === "MODIFIED") seen.set(e.object.metadata.name ?? "", e.object)
                    else if (e.type === "DELETED") seen.delete(e.object.metadata.name ?? "")
                  }
                  return events
                })
                yield* take
                for (const o of after) yield* Effect.ignore(apply(api, o))
                // A last object that always matches marks the end of the stream of interest.
                yield* api.create(
                  resources.imagePullJob,
                  job("zz-end", { metadata: { name: "zz-end", namespace: ns, labels: { keep: "yes" } } })
                )
                while (!seen.has("zz-end")) yield* take
                const final = yield* api.list(resources.imagePullJob, { labelSelector })
                assert.deepStrictEqual(
                  [...seen.values()].sort((x, y) => ((x.metadata.name ?? "") < (y.metadata.name ?? "") ? -1 : 1)),
                  final.items
                )
              })
            ).pipe(Effect.scoped)
          ).then(() => true)
      ),
      { numRuns: 200 }
    )
  })
})
