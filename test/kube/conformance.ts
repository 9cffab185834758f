// What every KubeApi layer must do, checked through the KubeApi interface only, so that the same
// suite runs against the in-memory server and against a real (or embedded) kube-apiserver. It may
// share that server with others: every test works in a namespace of its own and on uniquely named
// cluster-scoped objects, removes what it made, compares resourceVersions only for equality, and
// bounds every wait (the server's clock is real). It assumes no controller acts on its objects.
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule, Stream } from "effect"
import type { Layer } from "effect"
import { recordEvent, withEventCorrelation } from "../../src/kube/events.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject, ListOptions, ObjectKey, WatchEvent } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import type { Resource } from "../../src/kube/resources.ts"

const kruise = "apps.kruise.io/v1alpha1"
const namespaces: Resource = { apiVersion: "v1", kind: "Namespace", plural: "namespaces", namespaced: false }
const rfc3339Seconds = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/

const unique = (prefix: string): string => `${prefix}-${Math.random().toString(36).slice(2, 8).padEnd(6, "0")}`

type Labels = Readonly<Record<string, string>>

const imagePullJob = (
  namespace: string,
  name: string,
  options: { readonly labels?: Labels; readonly finalizers?: ReadonlyArray<string>; readonly spec?: Record<string, unknown> } = {}
): KubeObject => ({
  apiVersion: kruise,
  kind: "ImagePullJob",
  metadata: {
    name,
    namespace,
    ...(options.labels === undefined ? {} : { labels: options.labels }),
    ...(options.finalizers === undefined ? {} : { finalizers: options.finalizers })
  },
  spec: { image: "nginx:1.25", parallelism: 1, ...options.spec }
})

const nodeImage = (name: string, labels: Labels = {}): KubeObject => ({
  apiVersion: kruise,
  kind: "NodeImage",
  metadata: { name, labels },
  spec: { images: { nginx: { tags: [{ tag: "1.25", version: 0 }] } } }
})

const pod = (namespace: string, name: string, nodeName: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace },
  spec: { nodeName, containers: [{ name: "main", image: "registry.k8s.io/pause:3.10" }] }
})

const keyOf = (object: KubeObject): ObjectKey =>
  object.metadata.namespace === undefined
    ? { name: object.metadata.name ?? "" }
    : { name: object.metadata.name ?? "", namespace: object.metadata.namespace }

const names = (items: ReadonlyArray<KubeObject>): Array<string> => items.map((o) => o.metadata.name ?? "").sort()

const field = (object: KubeObject, path: string): unknown => {
  let node: unknown = object
  for (const part of path.split(".")) node = (node as Record<string, unknown> | undefined)?.[part]
  return node
}

// At the end of the test: finalizers off, then delete, ignoring what is already gone.
const removeAtEnd = (resource: Resource, key: ObjectKey) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    yield* Effect.addFinalizer(() =>
      api
        .patch(resource, key, { metadata: { finalizers: null } })
        .pipe(Effect.ignore, Effect.andThen(api.delete(resource, key).pipe(Effect.ignore)))
    )
  })

/** Creates an object that the test's end removes. */
const make = (resource: Resource, object: KubeObject) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const created = yield* api.create(resource, object)
    yield* removeAtEnd(resource, keyOf(created))
    return created
  })

// A namespace of the test's own; on a real server deleting it also deletes what is left inside.
const testNamespace = Effect.gen(function* () {
  const api = yield* KubeApi
  const name = unique("preheat-conformance")
  yield* api.create(namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  yield* Effect.addFinalizer(() => api.delete(namespaces, { name }).pipe(Effect.ignore))
  return name
})

// A fresh namespace may briefly refuse pods (its default ServiceAccount is created asynchronously).
const makePod = (namespace: string, name: string, nodeName: string) =>
  make(resources.pod, pod(namespace, name, nodeName)).pipe(
    Effect.retry({ while: (e) => e._tag === "Forbidden", schedule: Schedule.spaced("200 millis"), times: 50 })
  )

const bounded = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.timeout(self, "15 seconds")

/** The first n non-bookmark events of a watch, or a failure if they do not come in time. */
const firstEvents = (resource: Resource, options: ListOptions & { readonly resourceVersion: string }, n: number) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    return yield* api.watch(resource, options).pipe(
      Stream.filter((e) => e.type !== "BOOKMARK"),
      Stream.take(n),
      Stream.runCollect,
      bounded
    )
  })

const summary = (events: ReadonlyArray<WatchEvent>): Array<string> =>
  events.map((e) => (e.type === "BOOKMARK" ? "BOOKMARK" : `${e.type} ${e.object.metadata.name ?? ""}`))

// Polls until the object is gone, as garbage collection may be asynchronous.
const awaitGone = (resource: Resource, key: ObjectKey) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    yield* api.get(resource, key).pipe(
      Effect.matchEffect({
        onSuccess: () => Effect.fail("still present" as const),
        onFailure: (e) => (e._tag === "NotFound" ? Effect.void : Effect.fail(e))
      }),
      Effect.retry({ schedule: Schedule.spaced("100 millis") }),
      Effect.timeout("30 seconds")
    )
  })

export const kubeApiConformance = (name: string, kubeApi: Layer.Layer<KubeApi>): void => {
  layer(kubeApi, { excludeTestServices: true })(`KubeApi conformance: ${name}`, (it) => {
    it.effect("create assigns the server's fields; get and list return the object", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job-a"))
        assert.strictEqual(created.metadata.name, "job-a")
        assert.strictEqual(created.metadata.namespace, ns)
        assert.isString(created.metadata.uid)
        assert.isNotEmpty(created.metadata.uid)
        assert.isString(created.metadata.resourceVersion)
        assert.isNotEmpty(created.metadata.resourceVersion)
        assert.strictEqual(created.metadata.generation, 1)
        assert.match(created.metadata.creationTimestamp ?? "", rfc3339Seconds)
        assert.strictEqual(field(created, "spec.image"), "nginx:1.25")

        const got = yield* api.get(resources.imagePullJob, { name: "job-a", namespace: ns })
        assert.strictEqual(got.metadata.uid, created.metadata.uid)
        assert.strictEqual(got.metadata.resourceVersion, created.metadata.resourceVersion)
        assert.strictEqual(field(got, "spec.image"), "nginx:1.25")

        const listed = yield* api.list(resources.imagePullJob, { namespace: ns })
        assert.deepStrictEqual(names(listed.items), ["job-a"])
        assert.isNotEmpty(listed.resourceVersion)
        assert.strictEqual(listed.items[0]?.metadata.uid, created.metadata.uid)
      })
    )

    it.effect("cluster-scoped objects have no namespace", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const name = unique("conformance-node")
        const created = yield* make(resources.nodeImage, nodeImage(name))
        assert.isUndefined(created.metadata.namespace)
        const got = yield* api.get(resources.nodeImage, { name })
        assert.strictEqual(got.metadata.uid, created.metadata.uid)
      })
    )

    it.effect("generateName makes a unique name from the prefix", () =>
      Effect.gen(function* () {
        const ns = yield* testNamespace
        const object = imagePullJob(ns, "")
        const withPrefix = { ...object, metadata: { namespace: ns, generateName: "job-" } }
        const a = yield* make(resources.imagePullJob, withPrefix)
        const b = yield* make(resources.imagePullJob, withPrefix)
        assert.match(a.metadata.name ?? "", /^job-[a-z0-9]+$/)
        assert.notStrictEqual(a.metadata.name, b.metadata.name)
      })
    )

    it.effect("a second object of the same name is AlreadyExists", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        yield* make(resources.imagePullJob, imagePullJob(ns, "twice"))
        const error = yield* Effect.flip(api.create(resources.imagePullJob, imagePullJob(ns, "twice")))
        assert.strictEqual(error._tag, "AlreadyExists")
      })
    )

    it.effect("a missing object is NotFound for get, update, patch and delete", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const key = { name: "missing", namespace: ns }
        assert.strictEqual((yield* Effect.flip(api.get(resources.imagePullJob, key)))._tag, "NotFound")
        const object = { ...imagePullJob(ns, "missing"), metadata: { ...key, resourceVersion: "1" } }
        assert.strictEqual((yield* Effect.flip(api.update(resources.imagePullJob, object)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(api.patch(resources.imagePullJob, key, { spec: { parallelism: 2 } })))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(api.delete(resources.imagePullJob, key)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(api.get(resources.nodeImage, { name: unique("missing") })))._tag, "NotFound")
      })
    )

    it.effect("update replaces the object and needs the current resourceVersion", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job", { labels: { a: "1" } }))
        const updated = yield* api.update(resources.imagePullJob, {
          ...created,
          metadata: { ...created.metadata, labels: { b: "2" } },
          spec: { image: "nginx:1.26", parallelism: 2 }
        })
        assert.notStrictEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion)
        assert.deepStrictEqual(updated.metadata.labels, { b: "2" })
        assert.strictEqual(field(updated, "spec.image"), "nginx:1.26")
        assert.strictEqual(updated.metadata.uid, created.metadata.uid)
        assert.strictEqual(updated.metadata.creationTimestamp, created.metadata.creationTimestamp)

        const stale = yield* Effect.flip(api.update(resources.imagePullJob, { ...created, spec: { image: "nginx:1.27" } }))
        assert.strictEqual(stale._tag, "Conflict")
        const got = yield* api.get(resources.imagePullJob, keyOf(created))
        assert.strictEqual(field(got, "spec.image"), "nginx:1.26")
      })
    )

    it.effect("an update of a custom resource without resourceVersion is Invalid", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const { resourceVersion: _, ...metadata } = created.metadata
        const error = yield* Effect.flip(api.update(resources.imagePullJob, { ...created, metadata }))
        assert.strictEqual(error._tag, "Invalid")
      })
    )

    it.effect("an update that changes nothing keeps the resourceVersion", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const same = yield* api.update(resources.imagePullJob, created)
        assert.strictEqual(same.metadata.resourceVersion, created.metadata.resourceVersion)
        const patched = yield* api.patch(resources.imagePullJob, keyOf(created), { spec: { image: "nginx:1.25" } })
        assert.strictEqual(patched.metadata.resourceVersion, created.metadata.resourceVersion)
      })
    )

    it.effect("a JSON patch applies its operations; a failed test refuses it as a Conflict naming the path and changes nothing", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const generation = created.metadata.generation
        assert.isNumber(generation)
        const statusOnly = yield* api.patch(resources.imagePullJob, keyOf(created), { status: { message: "report" } }, "status")
        // A status write moves the resourceVersion, not the generation: a test of the generation still holds.
        assert.notStrictEqual(statusOnly.metadata.resourceVersion, created.metadata.resourceVersion)
        const patched = yield* api.patch(resources.imagePullJob, keyOf(created), [
          { op: "test", path: "/metadata/generation", value: generation },
          { op: "add", path: "/spec/selector", value: { matchLabels: { "a/b": "c" } } },
          { op: "replace", path: "/spec/parallelism", value: 4 }
        ])
        assert.strictEqual(field(patched, "spec.parallelism"), 4)
        assert.strictEqual(field(patched, "spec.selector.matchLabels.a/b"), "c")
        assert.strictEqual(patched.metadata.generation, (generation ?? 0) + 1)
        const refused = yield* Effect.flip(
          api.patch(resources.imagePullJob, keyOf(created), [
            { op: "test", path: "/metadata/generation", value: generation },
            { op: "remove", path: "/spec/selector" }
          ])
        )
        assert.strictEqual(refused._tag, "Conflict", refused.message)
        assert.include(refused.message, "testing value /metadata/generation failed: test failed")
        const after = yield* api.get(resources.imagePullJob, keyOf(created))
        assert.strictEqual(after.metadata.resourceVersion, patched.metadata.resourceVersion)
      })
    )

    it.effect("the status subresource: main writes ignore status, status writes keep only status", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const main = yield* api.update(resources.imagePullJob, {
          ...created,
          spec: { image: "nginx:1.25", parallelism: 3 },
          status: { message: "from the main resource" }
        })
        assert.strictEqual(field(main, "spec.parallelism"), 3)
        assert.isUndefined(field(main, "status.message"))

        const status = yield* api.update(
          resources.imagePullJob,
          {
            ...main,
            metadata: { ...main.metadata, labels: { ignored: "yes" } },
            spec: { image: "nginx:1.25", parallelism: 9 },
            status: { message: "from status", desired: 2 }
          },
          "status"
        )
        assert.strictEqual(field(status, "status.message"), "from status")
        assert.strictEqual(field(status, "spec.parallelism"), 3)
        assert.isUndefined(status.metadata.labels?.["ignored"])
        assert.notStrictEqual(status.metadata.resourceVersion, main.metadata.resourceVersion)

        const staleStatus = yield* Effect.flip(api.update(resources.imagePullJob, { ...main, status: { message: "stale" } }, "status"))
        assert.strictEqual(staleStatus._tag, "Conflict")

        const patchedStatus = yield* api.patch(
          resources.imagePullJob,
          keyOf(created),
          {
            spec: { parallelism: 7 },
            status: { active: 1 }
          },
          "status"
        )
        assert.strictEqual(field(patchedStatus, "status.active"), 1)
        assert.strictEqual(field(patchedStatus, "status.message"), "from status")
        assert.strictEqual(field(patchedStatus, "spec.parallelism"), 3)

        const patchedMain = yield* api.patch(resources.imagePullJob, keyOf(created), {
          metadata: { labels: { a: "b" } },
          status: { message: "ignored" }
        })
        assert.strictEqual(field(patchedMain, "status.message"), "from status")
        assert.deepStrictEqual(patchedMain.metadata.labels, { a: "b" })
      })
    )

    it.effect("generation counts spec changes only", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const key = keyOf(created)
        const labelled = yield* api.patch(resources.imagePullJob, key, { metadata: { labels: { x: "y" } } })
        assert.strictEqual(labelled.metadata.generation, 1)
        const withStatus = yield* api.patch(resources.imagePullJob, key, { status: { message: "m" } }, "status")
        assert.strictEqual(withStatus.metadata.generation, 1)
        const respecced = yield* api.patch(resources.imagePullJob, key, { spec: { parallelism: 4 } })
        assert.strictEqual(respecced.metadata.generation, 2)
        const replaced = yield* api.update(resources.imagePullJob, { ...respecced, spec: { image: "nginx:1.26", parallelism: 4 } })
        assert.strictEqual(replaced.metadata.generation, 3)
      })
    )

    it.effect("merge patch merges objects, replaces lists, null deletes, and resourceVersion is a precondition", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(
          resources.imagePullJob,
          imagePullJob(ns, "job", { labels: { a: "1", b: "2" }, spec: { pullSecrets: ["one", "two"] } })
        )
        const key = keyOf(created)
        const patched = yield* api.patch(resources.imagePullJob, key, {
          metadata: { labels: { a: null, c: "3" } },
          spec: { pullSecrets: ["three"] }
        })
        assert.deepStrictEqual(patched.metadata.labels, { b: "2", c: "3" })
        assert.deepStrictEqual(field(patched, "spec.pullSecrets"), ["three"])
        assert.strictEqual(field(patched, "spec.image"), "nginx:1.25")

        const cleared = yield* api.patch(resources.imagePullJob, key, { spec: { pullSecrets: null } })
        assert.isUndefined(field(cleared, "spec.pullSecrets"))
        assert.strictEqual(field(cleared, "spec.image"), "nginx:1.25")

        const stale = yield* Effect.flip(
          api.patch(resources.imagePullJob, key, {
            metadata: { resourceVersion: created.metadata.resourceVersion },
            spec: { parallelism: 5 }
          })
        )
        assert.strictEqual(stale._tag, "Conflict")
        const current = yield* api.patch(resources.imagePullJob, key, {
          metadata: { resourceVersion: cleared.metadata.resourceVersion },
          spec: { parallelism: 5 }
        })
        assert.strictEqual(field(current, "spec.parallelism"), 5)
      })
    )

    it.effect("a repeated Event is recorded once and counted by merge patches (client-go's event correlation)", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const job = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const record = recordEvent("conformance")
        const failed = { type: "Warning", reason: "PullImageFailed", message: "manifest unknown" } as const
        yield* withEventCorrelation(Effect.andThen(record(job, failed), Effect.andThen(record(job, failed), record(job, failed))))
        const events = (yield* api.list(resources.event, { namespace: ns })).items
        assert.deepStrictEqual(
          events.map((e) => [e["reason"], e["count"], e["message"]]),
          [["PullImageFailed", 3, "manifest unknown"]]
        )
        assert.strictEqual(field(events[0]!, "involvedObject.uid"), job.metadata.uid)
      })
    )

    it.effect("delete with finalizers marks the object; clearing them removes it", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "held", { finalizers: ["preheat.test/hold"] }))
        const key = keyOf(created)
        const answered = yield* api.delete(resources.imagePullJob, key)
        assert.strictEqual(answered?.metadata.uid, created.metadata.uid)
        assert.match(answered?.metadata.deletionTimestamp ?? "", rfc3339Seconds)
        const marked = yield* api.get(resources.imagePullJob, key)
        assert.match(marked.metadata.deletionTimestamp ?? "", rfc3339Seconds)
        assert.deepStrictEqual(marked.metadata.finalizers, ["preheat.test/hold"])
        assert.isAtLeast(marked.metadata.generation ?? 0, created.metadata.generation ?? 0)

        const adding = yield* Effect.flip(
          api.patch(resources.imagePullJob, key, {
            metadata: { finalizers: ["preheat.test/hold", "preheat.test/another"] }
          })
        )
        assert.strictEqual(adding._tag, "Invalid")

        // Other writes still work while the object waits for its finalizers.
        yield* api.patch(resources.imagePullJob, key, { status: { message: "finishing" } }, "status")
        yield* api.patch(resources.imagePullJob, key, { metadata: { finalizers: null } })
        assert.strictEqual((yield* Effect.flip(api.get(resources.imagePullJob, key)))._tag, "NotFound")
      })
    )

    it.effect("delete honours a uid precondition, which protects a re-created object", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const first = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const key = keyOf(first)
        yield* api.delete(resources.imagePullJob, key, { uid: first.metadata.uid ?? "" })
        const second = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        assert.notStrictEqual(second.metadata.uid, first.metadata.uid)
        const error = yield* Effect.flip(api.delete(resources.imagePullJob, key, { uid: first.metadata.uid ?? "" }))
        assert.strictEqual(error._tag, "Conflict")
        const still = yield* api.get(resources.imagePullJob, key)
        assert.strictEqual(still.metadata.uid, second.metadata.uid)
      })
    )

    it.effect("delete answers the object it deleted and honours a resourceVersion precondition", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const key = keyOf(created)
        const changed = yield* api.patch(resources.imagePullJob, key, { metadata: { labels: { changed: "yes" } } })
        const stale = yield* Effect.flip(api.delete(resources.imagePullJob, key, { resourceVersion: created.metadata.resourceVersion }))
        assert.strictEqual(stale._tag, "Conflict")
        const deleted = yield* api.delete(resources.imagePullJob, key, { resourceVersion: changed.metadata.resourceVersion })
        assert.strictEqual(deleted?.metadata.uid, created.metadata.uid)
        assert.deepStrictEqual(deleted?.metadata.labels, { changed: "yes" })
        assert.strictEqual((yield* Effect.flip(api.get(resources.imagePullJob, key)))._tag, "NotFound")
      })
    )

    it.effect("deleting an owner garbage-collects its dependents", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const parent = yield* make(resources.imageListPullJob, {
          apiVersion: kruise,
          kind: "ImageListPullJob",
          metadata: { name: "parent", namespace: ns },
          spec: { images: ["nginx:1.25"], parallelism: 1 }
        })
        const child = yield* make(resources.imagePullJob, {
          ...imagePullJob(ns, "child"),
          metadata: {
            name: "child",
            namespace: ns,
            ownerReferences: [
              {
                apiVersion: kruise,
                kind: "ImageListPullJob",
                name: "parent",
                uid: parent.metadata.uid ?? "",
                controller: true,
                blockOwnerDeletion: true
              }
            ]
          }
        })
        const bystander = yield* make(resources.imagePullJob, imagePullJob(ns, "bystander"))
        yield* api.delete(resources.imageListPullJob, keyOf(parent))
        yield* awaitGone(resources.imagePullJob, keyOf(child))
        const kept = yield* api.get(resources.imagePullJob, keyOf(bystander))
        assert.strictEqual(kept.metadata.uid, bystander.metadata.uid)
      })
    )

    it.effect("list gives each item as the transform keeps it", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        yield* make(resources.imagePullJob, imagePullJob(ns, "a", { labels: { tier: "web" } }))
        yield* make(resources.imagePullJob, imagePullJob(ns, "b"))
        const list = yield* api.list(resources.imagePullJob, {
          namespace: ns,
          transform: (job) => ({
            metadata: { name: job.metadata.name ?? "", ...(job.metadata.labels === undefined ? {} : { labels: job.metadata.labels }) }
          })
        })
        assert.deepStrictEqual(
          list.items.map((job) => job.metadata),
          [{ name: "a", labels: { tier: "web" } }, { name: "b" }]
        )
      })
    )

    it.effect("label selectors select on list", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        yield* make(resources.imagePullJob, imagePullJob(ns, "a", { labels: { tier: "web", zone: "1" } }))
        yield* make(resources.imagePullJob, imagePullJob(ns, "b", { labels: { tier: "db" } }))
        yield* make(resources.imagePullJob, imagePullJob(ns, "c", { labels: { tier: "web", zone: "2" } }))
        yield* make(resources.imagePullJob, imagePullJob(ns, "d"))
        const select = (labelSelector: string) =>
          api.list(resources.imagePullJob, { namespace: ns, labelSelector }).pipe(Effect.map((l) => names(l.items)))
        assert.deepStrictEqual(yield* select(""), ["a", "b", "c", "d"])
        assert.deepStrictEqual(yield* select("tier=web"), ["a", "c"])
        assert.deepStrictEqual(yield* select("tier==web"), ["a", "c"])
        assert.deepStrictEqual(yield* select("tier!=web"), ["b", "d"])
        assert.deepStrictEqual(yield* select("tier in (web, db)"), ["a", "b", "c"])
        assert.deepStrictEqual(yield* select("tier notin (web)"), ["b", "d"])
        assert.deepStrictEqual(yield* select("zone"), ["a", "c"])
        assert.deepStrictEqual(yield* select("!zone"), ["b", "d"])
        assert.deepStrictEqual(yield* select("tier=web,zone=2"), ["c"])
        assert.deepStrictEqual(yield* select("tier=none"), [])
      })
    )

    it.effect("field selectors select by name and namespace on every kind", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const other = yield* testNamespace
        yield* make(resources.imagePullJob, imagePullJob(ns, "a"))
        yield* make(resources.imagePullJob, imagePullJob(ns, "b"))
        yield* make(resources.imagePullJob, imagePullJob(other, "a"))
        const select = (options: ListOptions) => api.list(resources.imagePullJob, options).pipe(Effect.map((l) => l.items))
        assert.deepStrictEqual(names(yield* select({ namespace: ns, fieldSelector: "metadata.name=a" })), ["a"])
        assert.deepStrictEqual(names(yield* select({ namespace: ns, fieldSelector: "metadata.name!=a" })), ["b"])
        const everywhere = yield* select({ fieldSelector: `metadata.namespace=${other}` })
        assert.deepStrictEqual(
          everywhere.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
          [`${other}/a`]
        )
        const byBoth = yield* select({ fieldSelector: `metadata.name==a,metadata.namespace=${ns}` })
        assert.deepStrictEqual(
          byBoth.map((o) => o.metadata.namespace),
          [ns]
        )

        const node = unique("conformance-node")
        yield* make(resources.nodeImage, nodeImage(node))
        yield* make(resources.nodeImage, nodeImage(unique("conformance-node")))
        const nodeImages = yield* api.list(resources.nodeImage, { fieldSelector: `metadata.name=${node}` })
        assert.deepStrictEqual(names(nodeImages.items), [node])
      })
    )

    it.effect("pods are selectable by spec.nodeName and status.phase", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const nodeA = unique("conformance-node")
        yield* makePod(ns, "on-a", nodeA)
        yield* makePod(ns, "elsewhere", unique("conformance-node"))
        yield* api.patch(resources.pod, { name: "on-a", namespace: ns }, { status: { phase: "Running" } }, "status")
        const select = (fieldSelector: string) =>
          api.list(resources.pod, { namespace: ns, fieldSelector }).pipe(Effect.map((l) => names(l.items)))
        assert.deepStrictEqual(yield* select(`spec.nodeName=${nodeA}`), ["on-a"])
        assert.deepStrictEqual(yield* select(`spec.nodeName!=${nodeA}`), ["elsewhere"])
        assert.deepStrictEqual(yield* select("status.phase=Running"), ["on-a"])
        assert.deepStrictEqual(yield* select(`status.phase!=Running,spec.nodeName!=${nodeA}`), ["elsewhere"])
      })
    )

    it.effect("a watch from a list's resourceVersion sees ADDED, MODIFIED and DELETED in order", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const start = yield* api.list(resources.imagePullJob, { namespace: ns })
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const updated = yield* api.patch(resources.imagePullJob, keyOf(created), { spec: { parallelism: 2 } })
        const statusWritten = yield* api.patch(resources.imagePullJob, keyOf(created), { status: { message: "m" } }, "status")
        yield* api.delete(resources.imagePullJob, keyOf(created))
        const events = yield* firstEvents(resources.imagePullJob, { namespace: ns, resourceVersion: start.resourceVersion }, 4)
        assert.deepStrictEqual(summary(events), ["ADDED job", "MODIFIED job", "MODIFIED job", "DELETED job"])
        const versions = events.map((e) => ("object" in e ? e.object.metadata.resourceVersion : undefined))
        assert.strictEqual(versions[0], created.metadata.resourceVersion)
        assert.strictEqual(versions[1], updated.metadata.resourceVersion)
        assert.strictEqual(versions[2], statusWritten.metadata.resourceVersion)
        const deleted = events[3]
        assert.strictEqual(deleted?.type === "DELETED" ? deleted.object.metadata.uid : undefined, created.metadata.uid)
      })
    )

    it.effect("a running watch delivers writes made after it started", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const start = yield* api.list(resources.imagePullJob, { namespace: ns })
        yield* make(resources.imagePullJob, imagePullJob(ns, "first"))
        const started = yield* Deferred.make<void>()
        const watching = yield* api.watch(resources.imagePullJob, { namespace: ns, resourceVersion: start.resourceVersion }).pipe(
          Stream.filter((e) => e.type !== "BOOKMARK"),
          Stream.tap(() => Deferred.succeed(started, undefined)),
          Stream.take(2),
          Stream.runCollect,
          bounded,
          Effect.forkChild
        )
        yield* bounded(Deferred.await(started))
        yield* make(resources.imagePullJob, imagePullJob(ns, "second"))
        const events = yield* Fiber.join(watching)
        assert.deepStrictEqual(summary(events), ["ADDED first", "ADDED second"])
      })
    )

    it.effect("a watch resumed from a mid-stream resourceVersion sees only later events", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const created = yield* make(resources.imagePullJob, imagePullJob(ns, "job"))
        const middle = yield* api.patch(resources.imagePullJob, keyOf(created), { spec: { parallelism: 2 } })
        const last = yield* api.patch(resources.imagePullJob, keyOf(created), { spec: { parallelism: 3 } })
        const events = yield* firstEvents(
          resources.imagePullJob,
          { namespace: ns, resourceVersion: middle.metadata.resourceVersion ?? "" },
          1
        )
        const only = events[0]
        assert.strictEqual(only?.type, "MODIFIED")
        if (only?.type === "MODIFIED") {
          assert.strictEqual(only.object.metadata.resourceVersion, last.metadata.resourceVersion)
          assert.strictEqual(field(only.object, "spec.parallelism"), 3)
        }
      })
    )

    it.effect("a watch from resourceVersion 0 starts with the existing objects as ADDED", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        yield* make(resources.imagePullJob, imagePullJob(ns, "a"))
        const b = yield* make(resources.imagePullJob, imagePullJob(ns, "b"))
        yield* api.delete(resources.imagePullJob, keyOf(b))
        yield* make(resources.imagePullJob, imagePullJob(ns, "c"))
        const events = yield* firstEvents(resources.imagePullJob, { namespace: ns, resourceVersion: "0" }, 2)
        assert.deepStrictEqual(summary(events).sort(), ["ADDED a", "ADDED c"])
      })
    )

    it.effect("a label-selected watch sees objects enter and leave the selection", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const ns = yield* testNamespace
        const start = yield* api.list(resources.imagePullJob, { namespace: ns })
        const job = yield* make(resources.imagePullJob, imagePullJob(ns, "job", { labels: { tier: "web" } }))
        yield* make(resources.imagePullJob, imagePullJob(ns, "other", { labels: { tier: "db" } }))
        yield* api.patch(resources.imagePullJob, keyOf(job), { metadata: { labels: { tier: "db" } } })
        yield* api.patch(resources.imagePullJob, keyOf(job), { spec: { parallelism: 2 } })
        yield* api.patch(resources.imagePullJob, keyOf(job), { metadata: { labels: { tier: "web" } } })
        yield* api.patch(resources.imagePullJob, keyOf(job), { spec: { parallelism: 3 } })
        yield* api.delete(resources.imagePullJob, keyOf(job))
        const events = yield* firstEvents(
          resources.imagePullJob,
          { namespace: ns, labelSelector: "tier=web", resourceVersion: start.resourceVersion },
          5
        )
        assert.deepStrictEqual(summary(events), ["ADDED job", "DELETED job", "ADDED job", "MODIFIED job", "DELETED job"])
      })
    )

    it.effect("a field-selected watch sees only the named object", () =>
      Effect.gen(function* () {
        const api = yield* KubeApi
        const mine = unique("conformance-node")
        const theirs = unique("conformance-node")
        const start = yield* api.list(resources.nodeImage, { fieldSelector: `metadata.name=${mine}` })
        yield* make(resources.nodeImage, nodeImage(theirs))
        yield* make(resources.nodeImage, nodeImage(mine))
        yield* api.patch(resources.nodeImage, { name: theirs }, { metadata: { labels: { touched: "yes" } } })
        yield* api.patch(resources.nodeImage, { name: mine }, { status: { desired: 1 } }, "status")
        const events = yield* firstEvents(
          resources.nodeImage,
          { fieldSelector: `metadata.name=${mine}`, resourceVersion: start.resourceVersion },
          2
        )
        assert.deepStrictEqual(summary(events), [`ADDED ${mine}`, `MODIFIED ${mine}`])
      })
    )
  })
}
