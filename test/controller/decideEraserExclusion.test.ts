// The pure decisions of eraser's exclusion list (issue 39): which jobs count, the entries in the
// forms eraser compares (eraser-dev/eraser pkg/utils/utils.go IsExcluded), the text and its size
// bound, and what to write.
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeImagePullJob } from "../../src/api/decode.ts"
import type { ImagePullJob } from "../../src/api/imagePullJob.ts"
import {
  decideExclusion,
  excludedImages,
  exclusionDataKey,
  exclusionEntries,
  exclusionListName,
  exclusionText,
  keepsWarm
} from "../../src/controller/eraserExclusion/decide.ts"
import { entriesChanged } from "../../src/controller/eraserExclusion/watches.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import type { Stored } from "../../src/kube/store.ts"
import type { Decoded } from "../../src/controller/stores.ts"
import { makeJob } from "../support/fixtures.ts"

const never = { type: "Never" }
const digestA = `sha256:${"a".repeat(64)}`
const digestB = `sha256:${"b".repeat(64)}`

const stored = (raw: Record<string, unknown>): Stored<Decoded<ImagePullJob>> => {
  const object = { apiVersion: "apps.kruise.io/v1alpha1", kind: "ImagePullJob", metadata: { name: "j", namespace: "default" }, ...raw }
  return { raw: object as KubeObject, view: decodeImagePullJob(object) }
}

describe("keepsWarm: the jobs whose images eraser must leave", () => {
  it("a valid Never job, paused or not; not an Always job, a job being deleted, an invalid or undecodable one", () => {
    expect(keepsWarm(stored({ spec: { image: "nginx:1", completionPolicy: never } }))).toBeDefined()
    expect(keepsWarm(stored({ spec: { image: "nginx:1", completionPolicy: never, parallelism: 0 } }))).toBeDefined()
    expect(keepsWarm(stored({ spec: { image: "nginx:1", completionPolicy: { type: "Always" } } }))).toBeUndefined()
    expect(keepsWarm(stored({ spec: { image: "nginx:1" } }))).toBeUndefined()
    expect(
      keepsWarm(
        stored({
          metadata: { name: "j", namespace: "default", deletionTimestamp: "2026-12-05T00:00:00Z", finalizers: ["x"] },
          spec: { image: "nginx:1", completionPolicy: never }
        })
      )
    ).toBeUndefined()
    const refused = {
      conditions: [{ type: "Valid", status: "False", reason: "PullSecretNotFound", lastTransitionTime: "2026-12-05T00:00:00Z" }]
    }
    expect(keepsWarm(stored({ spec: { image: "nginx:1", completionPolicy: never }, status: refused }))).toBeUndefined()
    const undecodable = stored({ spec: { image: "Nginx:1", completionPolicy: never } })
    expect(Result.isFailure(undecodable.view)).toBe(true)
    expect(keepsWarm(undecodable)).toBeUndefined()
    expect(keepsWarm(undefined)).toBeUndefined()
  })
})

describe("exclusionEntries: the forms eraser compares", () => {
  it("a tag reference as the runtime's repo tag: registry and library/ filled in, latest when none", () => {
    expect(exclusionEntries(makeJob({ image: "nginx:1.25", completionPolicy: never }))).toEqual(["docker.io/library/nginx:1.25"])
    expect(exclusionEntries(makeJob({ image: "nginx", completionPolicy: never }))).toEqual(["docker.io/library/nginx:latest"])
    expect(exclusionEntries(makeJob({ image: "index.docker.io/team/app:2", completionPolicy: never }))).toEqual(["docker.io/team/app:2"])
    expect(exclusionEntries(makeJob({ image: "registry.example.com:5000/a/b:v1", completionPolicy: never }))).toEqual([
      "registry.example.com:5000/a/b:v1"
    ])
  })

  it("a digest reference as the bare digest (a pull by digest records no tag), the tag dropped", () => {
    expect(exclusionEntries(makeJob({ image: `nginx@${digestA}`, completionPolicy: never }))).toEqual([digestA])
    expect(exclusionEntries(makeJob({ image: `nginx:1.25@${digestA}`, completionPolicy: never }))).toEqual([digestA])
  })

  it("and every digest the job's nodes resolved it to; a malformed one is left out", () => {
    const status = {
      imageDigests: [
        { digest: digestB, nodes: 3 },
        { digest: digestA, nodes: 1 },
        { digest: "sha256:short", nodes: 1 }
      ]
    }
    expect(exclusionEntries(makeJob({ image: "nginx:1.25", completionPolicy: never }, { status }))).toEqual([
      "docker.io/library/nginx:1.25",
      digestB,
      digestA
    ])
  })
})

describe("excludedImages and exclusionText", () => {
  it("deduplicated and sorted, whatever the jobs' order", () => {
    const jobs = [
      makeJob({ image: "redis:7", completionPolicy: never }),
      makeJob({ image: "docker.io/library/nginx:1.25", completionPolicy: never }),
      makeJob({ image: "nginx:1.25", completionPolicy: never }, { status: { imageDigests: [{ digest: digestA, nodes: 1 }] } })
    ]
    const expected = ["docker.io/library/nginx:1.25", "docker.io/library/redis:7", digestA]
    expect(excludedImages(jobs)).toEqual(expected)
    expect(excludedImages([...jobs].reverse())).toEqual(expected)
  })

  it('eraser\'s JSON, {"excluded": [...]}, one entry a line', () => {
    const { left, text } = exclusionText(["docker.io/library/nginx:1.25", digestA])
    expect(left).toEqual([])
    expect(JSON.parse(text)).toEqual({ excluded: ["docker.io/library/nginx:1.25", digestA] })
    expect(text).toBe(`{\n  "excluded": [\n    "docker.io/library/nginx:1.25",\n    "${digestA}"\n  ]\n}\n`)
  })

  it("bounded by a ConfigMap's 1 MiB: as many entries as fit, exactly, and the rest named", () => {
    const entries = Array.from({ length: 30_000 }, (_, i) => `registry.example.com/team/image-${String(i).padStart(5, "0")}:v1`)
    const { left, text } = exclusionText(entries)
    expect(text.length).toBeLessThanOrEqual(1024 * 1024)
    const kept = (JSON.parse(text) as { excluded: Array<string> }).excluded
    expect(left.length).toBeGreaterThan(0)
    expect(kept.length + left.length).toBe(entries.length)
    expect([...kept, ...left]).toEqual(entries)
    // One more would not have fitted.
    expect(exclusionText(entries.slice(0, kept.length + 1), 1024 * 1024).left).toHaveLength(1)
    expect(exclusionText(entries.slice(0, kept.length), 1024 * 1024).left).toHaveLength(0)
  })
})

describe("decideExclusion: the one ConfigMap", () => {
  const ours = (data: Record<string, string>, labels: Record<string, string> = {}): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: exclusionListName,
      namespace: "eraser-system",
      resourceVersion: "7",
      uid: "u1",
      labels: { "eraser.sh/exclude.list": "true", "app.kubernetes.io/managed-by": "preheat", ...labels }
    },
    data
  })
  const entries = ["docker.io/library/nginx:1.25"]
  const text = exclusionText(entries).text

  it("created, labelled for eraser and as preheat's, when a Never job keeps an image warm", () => {
    expect(decideExclusion("eraser-system", entries, undefined)).toEqual({
      action: "create",
      left: [],
      object: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: exclusionListName,
          namespace: "eraser-system",
          labels: { "eraser.sh/exclude.list": "true", "app.kubernetes.io/managed-by": "preheat" }
        },
        data: { [exclusionDataKey]: text }
      }
    })
    expect(exclusionDataKey.endsWith(".json")).toBe(true)
  })

  it("no write when nothing changed; an update (on the version read) when the text, our label or the data's keys did", () => {
    expect(decideExclusion("eraser-system", entries, ours({ [exclusionDataKey]: text }))).toEqual({ action: "none" })
    const changed = decideExclusion("eraser-system", [...entries, digestA], ours({ [exclusionDataKey]: text }, { team: "a" }))
    expect(changed.action).toBe("update")
    if (changed.action !== "update") return
    expect(changed.object.metadata.resourceVersion).toBe("7")
    expect(changed.object.metadata.labels).toEqual({
      "eraser.sh/exclude.list": "true",
      "app.kubernetes.io/managed-by": "preheat",
      team: "a"
    })
    expect(changed.object["data"]).toEqual({ [exclusionDataKey]: exclusionText([...entries, digestA]).text })
    // Another .json key sorting first would be what eraser reads: the data is ours whole.
    const extra = decideExclusion("eraser-system", entries, ours({ [exclusionDataKey]: text, "a.json": "{}" }))
    expect(extra.action === "update" && extra.object["data"]).toEqual({ [exclusionDataKey]: text })
    const unlabelled = ours({ [exclusionDataKey]: text }, { "eraser.sh/exclude.list": "false" })
    expect(decideExclusion("eraser-system", entries, unlabelled).action).toBe("update")
  })

  it("deleted when no Never job remains; nothing when there is none either", () => {
    const current = ours({ [exclusionDataKey]: text })
    expect(decideExclusion("eraser-system", [], current)).toEqual({ action: "delete", object: current })
    expect(decideExclusion("eraser-system", [], undefined)).toEqual({ action: "none" })
  })

  it("a ConfigMap of that name preheat does not manage is never touched", () => {
    const foreign: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: exclusionListName, namespace: "eraser-system" } }
    expect(decideExclusion("eraser-system", entries, foreign)).toEqual({ action: "notOurs", object: foreign })
    expect(decideExclusion("eraser-system", [], foreign)).toEqual({ action: "notOurs", object: foreign })
  })
})

describe("entriesChanged: the job changes that wake the list", () => {
  const job = (spec: Record<string, unknown>, status?: unknown) => stored({ spec, ...(status === undefined ? {} : { status }) })
  const a = job({ image: "nginx:1", completionPolicy: never })

  it("a Never job coming or going, its image or its resolved digests changing", () => {
    expect(entriesChanged({ type: "added", current: a })).toBe(true)
    expect(entriesChanged({ type: "deleted", old: a })).toBe(true)
    expect(entriesChanged({ type: "modified", old: a, current: job({ image: "nginx:2", completionPolicy: never }) })).toBe(true)
    const resolved = job({ image: "nginx:1", completionPolicy: never }, { imageDigests: [{ digest: digestA, nodes: 1 }] })
    expect(entriesChanged({ type: "modified", old: a, current: resolved })).toBe(true)
  })

  it("not its progress, nor any change of an Always job", () => {
    const progressed = job({ image: "nginx:1", completionPolicy: never }, { desired: 3, active: 1, succeeded: 2, failed: 0 })
    expect(entriesChanged({ type: "modified", old: a, current: progressed })).toBe(false)
    const always = job({ image: "nginx:1" })
    expect(entriesChanged({ type: "added", current: always })).toBe(false)
    expect(entriesChanged({ type: "modified", old: always, current: job({ image: "nginx:2" }) })).toBe(false)
  })
})
