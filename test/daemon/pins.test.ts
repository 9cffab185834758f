import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { pinnedLabel, preheatPinLabel } from "../../src/daemon/pins/pinDecision.ts"
import { KubeApi, type KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { loggingLayer } from "../../src/ops/logging.ts"
import { advance, createNodeImage, launch, setImages, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

/**
 * `--pin-images` on simulated time: the daemon with the fake runtime (its image records and
 * labels as containerd keeps them) and the in-memory API server holding the owner jobs.
 */

const job = (name: string, type: "Always" | "Never", image = "nginx:1.25") =>
  Effect.flatMap(Effect.service(KubeApi), (api) =>
    api.create(resources.imagePullJob, {
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImagePullJob",
      metadata: { name, namespace: "default" },
      spec: { image, completionPolicy: { type } }
    })
  )

const ownerOf = (object: KubeObject) => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  name: object.metadata.name,
  namespace: "default",
  uid: object.metadata.uid
})

/** A tag written by a job, as the controller writes it. */
const jobTag = (name: string, owner: KubeObject, extra: Record<string, unknown> = {}) =>
  tag(name, { ownerReferences: [ownerOf(owner)], ...extra })

/** Every image record on the node whose labels say pinned, and whether preheat's marker is on it. */
const pinnedRecords = Effect.gen(function* () {
  const fake = yield* SimulatedRuntime
  const pinned: Array<{ readonly name: string; readonly ours: boolean }> = []
  for (const image of yield* fake.images) {
    for (const name of [image.id, ...image.repoTags, ...image.repoDigests]) {
      const labels = yield* fake.labelsOf(name)
      if (labels[pinnedLabel] === "pinned") pinned.push({ name, ours: labels[preheatPinLabel] === "true" })
    }
  }
  return pinned
})

const pinnedNames = Effect.map(pinnedRecords, (records) => records.map((r) => r.name).sort())

const recordsOf = (reference: string) =>
  Effect.gen(function* () {
    const fake = yield* SimulatedRuntime
    const image = (yield* fake.images).find((i) => i.repoTags.some((t) => t.endsWith(`/${reference}`)))
    return image === undefined ? [] : [image.id, ...image.repoTags, ...image.repoDigests].sort()
  })

const minutes = (n: number) => n * 60_000

describe("daemon --pin-images", () => {
  it.effect("pins every record of an image pulled for a Never job, not one pulled for an Always job", () =>
    Effect.gen(function* () {
      const warm = yield* job("warm", "Never")
      const once = yield* job("once", "Always", "redis:7")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] }, redis: { tags: [jobTag("7", once)] } })
      yield* launch({ pinImages: true })
      yield* advance(2000)
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
      expect((yield* tagStatus("redis", "7"))?.phase).toBe("Succeeded")
      const nginx = yield* recordsOf("nginx:1.25")
      // The id, the tag and the digest name: the kubelet collects by id, CRI removes every name.
      expect(nginx).toHaveLength(3)
      expect(yield* pinnedNames).toEqual(nginx)
      expect((yield* pinnedRecords).every((r) => r.ours)).toBe(true)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("off by default: nothing is pinned", () =>
    Effect.gen(function* () {
      const warm = yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
      yield* launch()
      yield* advance(2000)
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
      expect(yield* pinnedNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the tag removed before its TTL (job deleted, node no longer selected): unpinned at once", () =>
    Effect.gen(function* () {
      const warm = yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm, { pullPolicy: { ttlSecondsAfterFinished: 86400 } })] } })
      yield* launch({ pinImages: true })
      yield* advance(2000)
      expect(yield* pinnedNames).toHaveLength(3)
      yield* setImages({})
      yield* advance(100)
      expect(yield* pinnedNames).toEqual([])
      // The labels went; the image stays (pinning never removes images).
      expect(yield* recordsOf("nginx:1.25")).toHaveLength(3)
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the job changed to Always (the controller rewrites the tag's pull policy): unpinned", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const warm = yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm, { pullPolicy: { ttlSecondsAfterFinished: 86400 } })] } })
      yield* launch({ pinImages: true })
      yield* advance(2000)
      expect(yield* pinnedNames).toHaveLength(3)
      yield* api.patch(resources.imagePullJob, { namespace: "default", name: "warm" }, { spec: { completionPolicy: { type: "Always" } } })
      yield* setImages({ nginx: { tags: [jobTag("1.25", warm, { pullPolicy: { ttlSecondsAfterFinished: 900 } })] } })
      yield* advance(100)
      expect(yield* pinnedNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the job deleted while its tag stays (no NodeImage change): unpinned at the next resync, 10 min", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const warm = yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
      yield* launch({ pinImages: true })
      yield* advance(2000)
      expect(yield* pinnedNames).toHaveLength(3)
      yield* api.delete(resources.imagePullJob, { namespace: "default", name: "warm" })
      yield* advance(minutes(9), 10_000)
      expect(yield* pinnedNames).toHaveLength(3)
      yield* advance(minutes(1) + 2000, 10_000)
      expect(yield* pinnedNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a job re-created under the same name (another uid) does not keep the old tag's pin", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const warm = yield* job("warm", "Never")
      yield* api.delete(resources.imagePullJob, { namespace: "default", name: "warm" })
      yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
      yield* launch({ pinImages: true })
      yield* advance(2000)
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
      expect(yield* pinnedNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the daily re-pull: a Never tag dropped at its TTL keeps its pin until the job writes it again", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      const warm = yield* job("warm", "Never")
      const policy = { pullPolicy: { ttlSecondsAfterFinished: 60 } }
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm, policy)] } })
      yield* launch({ pinImages: true })
      yield* advance(2000)
      expect(yield* pinnedNames).toHaveLength(3)
      // The controller drops the tag at completion + 60 s ...
      yield* advance(60_000, 1000)
      yield* setImages({})
      yield* advance(minutes(30), 10_000)
      expect(yield* pinnedNames).toHaveLength(3)
      // ... and the job writes it again, a new version (pulled again: the image is there).
      yield* setImages({ nginx: { tags: [jobTag("1.25", warm, { ...policy, version: 1 })] } })
      yield* advance(2000)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", version: 1 })
      expect(yield* pinnedNames).toHaveLength(3)
      // Dropped again, and the job deleted meanwhile: the hold ends at the next resync.
      yield* advance(60_000, 1000)
      yield* setImages({})
      yield* advance(1000)
      expect(yield* pinnedNames).toHaveLength(3)
      yield* api.delete(resources.imagePullJob, { namespace: "default", name: "warm" })
      yield* advance(minutes(10) + 1000, 10_000)
      expect(yield* pinnedNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  const earlierRun = {
    images: [
      { references: ["nginx:1.25", `nginx@sha256:${"d".repeat(64)}`], id: `sha256:${"a".repeat(64)}` },
      { references: ["registry.k8s.io/pause:3.9"], id: `sha256:${"b".repeat(64)}` }
    ]
  }
  /** What an earlier run left: nginx pinned by preheat, pause pinned by containerd (the sandbox image). */
  const pinnedEarlier = Effect.gen(function* () {
    const fake = yield* SimulatedRuntime
    for (const name of [`sha256:${"a".repeat(64)}`, "docker.io/library/nginx:1.25", `docker.io/library/nginx@sha256:${"d".repeat(64)}`]) {
      yield* fake.imageLabels.setLabels(name, { [pinnedLabel]: "pinned", [preheatPinLabel]: "true" })
    }
    yield* fake.imageLabels.setLabels("registry.k8s.io/pause:3.9", { [pinnedLabel]: "pinned" })
  })

  it.effect("a restart after the tag went away: preheat's pins are removed at start, others' pins stay", () =>
    Effect.gen(function* () {
      yield* pinnedEarlier
      yield* createNodeImage({})
      yield* launch({ pinImages: true })
      yield* advance(100)
      expect(yield* pinnedRecords).toEqual([{ name: "registry.k8s.io/pause:3.9", ours: false }])
    }).pipe(Effect.scoped, Effect.provide(testLayer(earlierRun)))
  )

  it.effect("a restart with no NodeImage at all unpins too; one with the tag still wanted keeps the pin", () =>
    Effect.gen(function* () {
      yield* pinnedEarlier
      yield* launch({ pinImages: true })
      yield* advance(100)
      expect(yield* pinnedNames).toEqual(["registry.k8s.io/pause:3.9"])
    }).pipe(
      Effect.scoped,
      Effect.provide(testLayer(earlierRun)),
      Effect.andThen(
        Effect.gen(function* () {
          yield* pinnedEarlier
          const warm = yield* job("warm", "Never")
          yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
          yield* launch({ pinImages: true })
          yield* advance(100)
          expect(yield* pinnedNames).toHaveLength(4)
        }).pipe(Effect.scoped, Effect.provide(testLayer(earlierRun)))
      )
    )
  )

  it.effect("turned off: the pins of an earlier run are removed once at start, without reading any job", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* pinnedEarlier
      const warm = yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
      yield* launch()
      yield* advance(minutes(20), 10_000)
      expect(yield* pinnedNames).toEqual(["registry.k8s.io/pause:3.9"])
      expect((yield* fake.calls).filter((c) => c.method === "listImageRecords")).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer(earlierRun)))
  )

  it.effect("a runtime without containerd's images service: one warning, pulls go on, no label calls after", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const lines: Array<string> = []
      const warm = yield* job("warm", "Never")
      yield* Effect.gen(function* () {
        yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
        yield* launch({ pinImages: true })
        yield* advance(2000)
        yield* setImages({ nginx: { tags: [jobTag("1.25", warm), jobTag("1.26", warm)] } })
        yield* advance(minutes(20), 10_000)
      }).pipe(Effect.provide(loggingLayer({ format: "json", sink: (line) => lines.push(line) })))
      expect((yield* tagStatus("nginx", "1.26"))?.phase).toBe("Succeeded")
      const warnings = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((l) => typeof l["msg"] === "string" && l["msg"].startsWith("--pin-images"))
      expect(warnings).toEqual([
        expect.objectContaining({
          level: "warn",
          msg: "--pin-images: the runtime has no containerd images service; images are not pinned on this node"
        })
      ])
      expect((yield* fake.calls).filter((c) => c.method === "listImageRecords" || c.method === "setImageLabels")).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(testLayer({ imageLabels: "unsupported" })))
  )

  it.effect("owner jobs are read once per spec change and per resync, not again when a pull finishes", () =>
    Effect.gen(function* () {
      const inner = yield* KubeApi
      const reads: Array<string> = []
      const counting = KubeApi.of({
        ...inner,
        get: (resource, key) => {
          if (resource.kind === "ImagePullJob") reads.push(key.name)
          return inner.get(resource, key)
        }
      })
      const warm = yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
      yield* Effect.gen(function* () {
        yield* launch({ pinImages: true })
        yield* advance(2000)
        expect(yield* pinnedNames).toHaveLength(3)
        expect(reads).toEqual(["warm"])
        yield* setImages({ nginx: { tags: [jobTag("1.25", warm), jobTag("1.26", warm)] } })
        yield* advance(2000)
        expect((yield* tagStatus("nginx", "1.26"))?.phase).toBe("Succeeded")
        expect(yield* pinnedNames).toHaveLength(6)
        expect(reads).toEqual(["warm", "warm"])
        yield* advance(minutes(10), 10_000)
        expect(reads).toEqual(["warm", "warm", "warm"])
      }).pipe(Effect.provideService(KubeApi, counting))
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("the runtime not answering: pins stay as they are, and are brought up to date once it answers", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const warm = yield* job("warm", "Never")
      yield* createNodeImage({ nginx: { tags: [jobTag("1.25", warm)] } })
      yield* launch({ pinImages: true })
      yield* advance(2000)
      expect(yield* pinnedNames).toHaveLength(3)
      yield* fake.setAvailable(false)
      yield* setImages({})
      yield* advance(10_000, 1000)
      expect(yield* pinnedNames).toHaveLength(3)
      yield* fake.setAvailable(true)
      // Retries back off from 1 s, doubling, at most a minute apart.
      yield* advance(60_000, 1000)
      expect(yield* pinnedNames).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})
