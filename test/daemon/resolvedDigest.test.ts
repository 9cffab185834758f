import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { CallRecord } from "../../harness/layers/simulatedRuntime/records.ts"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import { repoDigestFor } from "../../src/daemon/resolvedDigest.ts"
import { advance, createNodeImage, launch, setImages, tag, tagStatus, testLayer } from "./support/daemonHarness.ts"

const hex = (c: string) => c.repeat(64)
const idA = `sha256:${hex("a")}`
const idB = `sha256:${hex("b")}`
const d1 = `sha256:${hex("1")}`
const d2 = `sha256:${hex("2")}`

describe("the repo digest of the pulled repository", () => {
  it("picks the digest of the reference's repository among several, names normalised", () => {
    const repoDigests = [`registry.example.com/mirror/nginx@${d2}`, `docker.io/library/nginx@${d1}`]
    expect(repoDigestFor("nginx:1.25", repoDigests)).toBe(d1)
    expect(repoDigestFor("docker.io/library/nginx:latest", repoDigests)).toBe(d1)
    expect(repoDigestFor("registry.example.com/mirror/nginx:1.25", repoDigests)).toBe(d2)
  })

  it("is none when the runtime reports none for the repository, and the digest itself for a reference by digest", () => {
    expect(repoDigestFor("redis:7", [`docker.io/library/nginx@${d1}`])).toBeUndefined()
    expect(repoDigestFor("nginx:1.25", [])).toBeUndefined()
    expect(repoDigestFor(`nginx@${d2}`, [])).toBe(d2)
    // An image pulled by its index's digest and by its platform manifest's carries both: the one named.
    expect(repoDigestFor(`nginx@${d2}`, [`docker.io/library/nginx@${d1}`, `docker.io/library/nginx@${d2}`])).toBe(d2)
    expect(repoDigestFor("not a reference", [`docker.io/library/nginx@${d1}`])).toBeUndefined()
  })
})

/** The runtime's answers about images asked for after the (one) pull. */
const afterPull = (calls: ReadonlyArray<CallRecord>) =>
  calls
    .slice(calls.findIndex((c) => c.method === "pullImage") + 1)
    .filter((c) => c.method === "imageStatus" || c.method === "listImages")
    .map(({ method, image }) => ({ method, image }))

describe("daemon: the digest a tag resolved to", () => {
  it.effect("a pulled tag's status records the manifest digest the registry served", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.push({ reference: "nginx:1.25", id: idA, digest: d1 })
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      yield* advance(1500)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", imageID: idA, digest: d1 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("IfNotPresent on a node that has the image records the present image's digest", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      expect(yield* fake.pulls).toEqual([])
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", imageID: idA, digest: d1 })
    }).pipe(
      Effect.scoped,
      Effect.provide(testLayer({ images: [{ references: ["docker.io/library/nginx:1.25", `docker.io/library/nginx@${d1}`], id: idA }] }))
    )
  )

  it.effect("Always, after the tag moved in the registry: a new version resolves to the new digest", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.push({ reference: "nginx:1.25", id: idA, digest: d1 })
      yield* createNodeImage({ nginx: { tags: [tag("1.25", { imagePullPolicy: "Always" })] } })
      yield* launch()
      yield* advance(1500)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", digest: d1 })
      yield* fake.push({ reference: "nginx:1.25", id: idB, digest: d2 })
      yield* setImages({ nginx: { tags: [tag("1.25", { imagePullPolicy: "Always", version: 1 })] } })
      yield* advance(1500)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", version: 1, imageID: idB, digest: d2 })
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a tag pulled by digest records that digest, without asking the runtime after the pull", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* createNodeImage({ "registry.example.com/team/app": { tags: [tag(d2)] } })
      yield* launch()
      yield* advance(1500)
      expect(yield* tagStatus("registry.example.com/team/app", d2)).toMatchObject({ phase: "Succeeded", digest: d2 })
      expect(afterPull(yield* fake.calls)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )

  it.effect("a tag pulled by name asks the runtime once, by the image id the pull returned", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      yield* fake.push({ reference: "nginx:1.25", id: idA, digest: d1 })
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch()
      yield* advance(1500)
      expect(yield* tagStatus("nginx", "1.25")).toMatchObject({ phase: "Succeeded", digest: d1 })
      expect(afterPull(yield* fake.calls)).toEqual([{ method: "imageStatus", image: idA }])
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})
