import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { alikeObjects } from "../../src/kube/alikeObjects.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { makeStore } from "../../src/kube/store.ts"

/** As a live client gets it: parsed afresh, sharing nothing with what came before. */
const wire = <A>(value: A): A => JSON.parse(JSON.stringify(value)) as A

const owner = (job: string) => ({ apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", name: job, uid: `uid-${job}` })
const task = (job: string, ttl: number) => ({
  tags: [
    {
      tag: "v1",
      createdAt: "2026-12-06T00:00:00Z",
      pullPolicy: { ttlSecondsAfterFinished: ttl },
      ownerReferences: [owner(job)],
      version: 0
    }
  ]
})
const outcome = (completionTime: string) => ({
  tags: [{ tag: "v1", phase: "Succeeded", version: 0, completionTime, imageID: "sha256:0123456789abcdef0123456789abcdef" }]
})
const nodeImage = (
  node: string,
  resourceVersion: number,
  images: Record<string, unknown>,
  statuses: Record<string, unknown> = {},
  generation = 1
): KubeObject =>
  wire({
    apiVersion: "apps.kruise.io/v1alpha1",
    kind: "NodeImage",
    metadata: { name: node, uid: `uid-${node}`, resourceVersion: String(resourceVersion), generation },
    spec: { images },
    status: { imageStatuses: statuses }
  })

const store = () =>
  makeStore(resources.nodeImage, {
    specFollowsGeneration: true,
    alike: alikeObjects([
      ["spec", "images"],
      ["status", "imageStatuses"]
    ])
  })

const imageOf = (object: KubeObject | undefined, image: string) =>
  (object?.["spec"] as { images?: Record<string, unknown> } | undefined)?.images?.[image]
const statusOf = (object: KubeObject | undefined, image: string) =>
  (object?.["status"] as { imageStatuses?: Record<string, unknown> } | undefined)?.imageStatuses?.[image]

describe("a store of alike objects", () => {
  it("holds a tag and an outcome equal across NodeImages once, whichever node had that image last", () => {
    const nodeImages = store()
    const run = (effect: Effect.Effect<void>) => Effect.runSync(effect)
    run(nodeImages.listed([nodeImage("a", 1, {}), nodeImage("b", 2, {}), nodeImage("c", 3, {})]))
    run(nodeImages.written(nodeImage("a", 4, { nginx: task("job-1", 60) }, {}, 2)))
    // Another image's news in between: the object stored last has no nginx.
    run(nodeImages.written(nodeImage("c", 5, { redis: task("job-2", 60) }, {}, 2)))
    run(nodeImages.written(nodeImage("b", 6, { nginx: task("job-1", 60) }, {}, 2)))
    expect(imageOf(nodeImages.get("b"), "nginx")).toBe(imageOf(nodeImages.get("a"), "nginx"))
    // Outcomes, from the status: equal ones are one object, as is the spec a status report leaves.
    run(nodeImages.written(nodeImage("a", 7, { nginx: task("job-1", 60) }, { nginx: outcome("2026-12-06T00:00:09Z") }, 2)))
    run(nodeImages.written(nodeImage("b", 8, { nginx: task("job-1", 60) }, { nginx: outcome("2026-12-06T00:00:09Z") }, 2)))
    expect(statusOf(nodeImages.get("b"), "nginx")).toBe(statusOf(nodeImages.get("a"), "nginx"))
    expect(imageOf(nodeImages.get("b"), "nginx")).toBe(imageOf(nodeImages.get("a"), "nginx"))
  })

  it("takes a changed image from the few last stored under its name, not only the very last", () => {
    const nodeImages = store()
    const run = (effect: Effect.Effect<void>) => Effect.runSync(effect)
    run(nodeImages.listed([nodeImage("a", 1, {}), nodeImage("b", 2, {}), nodeImage("c", 3, {})]))
    // The TTL jitter gives one wave's tags a few variants.
    run(nodeImages.written(nodeImage("a", 4, { nginx: task("job-1", 60) }, {}, 2)))
    run(nodeImages.written(nodeImage("b", 5, { nginx: task("job-1", 120) }, {}, 2)))
    run(nodeImages.written(nodeImage("c", 6, { nginx: task("job-1", 60) }, {}, 2)))
    expect(imageOf(nodeImages.get("c"), "nginx")).toBe(imageOf(nodeImages.get("a"), "nginx"))
    expect(imageOf(nodeImages.get("b"), "nginx")).not.toBe(imageOf(nodeImages.get("a"), "nginx"))
    // The parts of b's that are equal still are one object.
    const tagOf = (node: string) => (imageOf(nodeImages.get(node), "nginx") as ReturnType<typeof task>).tags[0]!
    expect(tagOf("b").ownerReferences).toBe(tagOf("a").ownerReferences)
  })

  it("keeps what a version did not change the previous version's object, equal ones elsewhere or not", () => {
    const nodeImages = store()
    const changes: Array<{ readonly old: KubeObject; readonly current: KubeObject }> = []
    nodeImages.onChange((change) =>
      Effect.sync(() => {
        if (change.type === "modified") changes.push({ old: change.old.raw, current: change.current.raw })
      })
    )
    const run = (effect: Effect.Effect<void>) => Effect.runSync(effect)
    run(nodeImages.listed([nodeImage("a", 1, { nginx: task("job-1", 60) }), nodeImage("b", 2, { nginx: task("job-1", 60) })]))
    const before = imageOf(nodeImages.get("a"), "nginx")
    run(nodeImages.written(nodeImage("a", 3, { nginx: task("job-1", 60) }, { nginx: outcome("2026-12-06T00:00:09Z") })))
    const change = changes.at(-1)!
    expect(imageOf(change.current, "nginx")).toBe(imageOf(change.old, "nginx"))
    expect(imageOf(change.current, "nginx")).toBe(before)
    expect(change.current["spec"]).toBe(change.old["spec"])
    expect(change.current).toEqual(nodeImage("a", 3, { nginx: task("job-1", 60) }, { nginx: outcome("2026-12-06T00:00:09Z") }))
  })

  it("remembers a bounded number of names and members per name", () => {
    const alike = alikeObjects([["spec", "images"]], 2, 2)
    const take = (node: string, images: Record<string, unknown>) => alike.took(nodeImage(node, 1, images), undefined)
    take("a", { one: task("job-1", 1) })
    take("b", { two: task("job-1", 1) })
    take("c", { three: task("job-1", 1) })
    const template = alike.template(nodeImage("d", 1, { one: {}, two: {}, three: {} })) as KubeObject
    // "one" was stored least recently: forgotten past two names.
    expect(Object.keys((template["spec"] as { images: object }).images)).toEqual(["two", "three"])
    const first = take("e", { x: task("job-1", 1) })
    take("f", { x: task("job-1", 2) })
    take("g", { x: task("job-1", 3) })
    // Two members per name: the first of three variants is gone.
    expect(imageOf(take("h", { x: task("job-1", 1) }), "x")).not.toBe(imageOf(first, "x"))
    expect(imageOf(take("i", { x: task("job-1", 3) }), "x")).toBe(imageOf(take("j", { x: task("job-1", 3) }), "x"))
  })
})
