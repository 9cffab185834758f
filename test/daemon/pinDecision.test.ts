import { describe, expect, it } from "vitest"
import type { ImageInfo } from "../../src/cri/CriRuntime.ts"
import type { ImageRecord } from "../../src/cri/ImageLabels.ts"
import {
  decidePins,
  holdLimitMillis,
  type OwnerPolicy,
  ownersToRead,
  pinDemand,
  type PinTag,
  pinTags,
  preheatPinLabel,
  pinnedLabel
} from "../../src/daemon/pins/pinDecision.ts"

const hex = (c: string) => c.repeat(64)
const never = { kind: "ImagePullJob", namespace: "default", name: "warm", uid: "u-never" }
const always = { kind: "ImagePullJob", namespace: "default", name: "once", uid: "u-always" }
const deleted = { kind: "ImagePullJob", namespace: "default", name: "old", uid: "u-gone" }
const policies = new Map<string, OwnerPolicy>([
  ["u-never", "Never"],
  ["u-always", "Always"],
  ["u-gone", "gone"]
])

const nginx: ImageInfo = {
  id: `sha256:${hex("a")}`,
  repoTags: ["docker.io/library/nginx:1.25"],
  repoDigests: [`docker.io/library/nginx@sha256:${hex("d")}`],
  size: 1
}
const redis: ImageInfo = { id: `sha256:${hex("b")}`, repoTags: ["docker.io/library/redis:7"], repoDigests: [], size: 1 }
const recordsOf = (image: ImageInfo, labels: Record<string, string> = {}): Array<ImageRecord> =>
  [image.id, ...image.repoTags, ...image.repoDigests].map((name) => ({ name, labels }))
const ours = { [pinnedLabel]: "pinned", [preheatPinLabel]: "true" }

describe("pinDemand: which references a node's tags want pinned", () => {
  const demand = (current: ReadonlyArray<PinTag>, previous: ReadonlyArray<PinTag> = [], now = 0) =>
    pinDemand({ previous, current, held: [], policies, now })

  it("a tag owned by a Never job is wanted; Always, deleted and ownerless (hand-written) tags are not", () => {
    expect(
      demand([
        { reference: "nginx:1.25", owners: [never] },
        { reference: "redis:7", owners: [always] },
        { reference: "busybox:1", owners: [deleted] },
        { reference: "alpine:3", owners: [] }
      ]).wanted
    ).toEqual(["nginx:1.25"])
  })

  it("one Never owner among several is enough", () => {
    expect(demand([{ reference: "nginx:1.25", owners: [always, never] }]).wanted).toEqual(["nginx:1.25"])
  })

  it("an owner whose policy is unknown (not read, not a job) does not pin", () => {
    expect(demand([{ reference: "nginx:1.25", owners: [{ kind: "ImagePullJob", name: "x", uid: "u-unknown" }] }]).wanted).toEqual([])
  })

  it("a Never tag removed before its TTL (job deleted, node deselected) is not held", () => {
    const result = demand([], [{ reference: "nginx:1.25", owners: [never], expiresAt: 3_600_000 }], 1_000)
    expect(result).toEqual({ wanted: [], held: [] })
  })

  it("a Never tag dropped at its TTL is held for the daily re-pull, at most a day, while its job is Never", () => {
    const dropped = { reference: "nginx:1.25", owners: [never], expiresAt: 10_000 }
    const first = demand([], [dropped], 10_000)
    expect(first.wanted).toEqual(["nginx:1.25"])
    expect(first.held).toEqual([{ reference: "nginx:1.25", owners: [never], until: 10_000 + holdLimitMillis }])
    // Still held on the next pass, with nothing in the spec.
    const next = pinDemand({ previous: [], current: [], held: first.held, policies, now: 20_000 })
    expect(next.wanted).toEqual(["nginx:1.25"])
    // The job writes the tag again: wanted by the tag, the hold ends.
    const current = [{ reference: "nginx:1.25", owners: [never] }]
    const back = pinDemand({ previous: [], current, held: next.held, policies, now: 30_000 })
    expect(back).toEqual({ wanted: ["nginx:1.25"], held: [] })
    // A day later without it: no longer held.
    expect(pinDemand({ previous: [], current: [], held: first.held, policies, now: 10_000 + holdLimitMillis }).wanted).toEqual([])
    // The job deleted (or made Always) meanwhile: no longer held.
    const gone = new Map<string, OwnerPolicy>([["u-never", "gone"]])
    expect(pinDemand({ previous: [], current: [], held: first.held, policies: gone, now: 20_000 }).wanted).toEqual([])
  })

  it("clock skew: a tag gone a few minutes before the expiry we computed still counts as dropped by TTL", () => {
    expect(demand([], [{ reference: "nginx:1.25", owners: [never], expiresAt: 200_000 }], 0).wanted).toEqual(["nginx:1.25"])
  })

  it("ownersToRead: each job once, from the tags now, the tags just gone and the holds", () => {
    const read = ownersToRead(
      [{ reference: "a:1", owners: [never, deleted] }],
      [{ reference: "b:1", owners: [never, always] }],
      [{ reference: "c:1", owners: [{ ...always }], until: 1 }]
    )
    expect(read.map((o) => o.uid)).toEqual(["u-never", "u-always", "u-gone"])
  })
})

describe("pinTags: the spec's tags with their expiry", () => {
  it("expiry is the current version's completion plus the tag's TTL; other versions and unfinished tags have none", () => {
    const tags = pinTags(
      {
        images: {
          nginx: {
            tags: [
              {
                tag: "1.25",
                version: 1,
                imagePullPolicy: "IfNotPresent",
                ownerReferences: [never],
                pullPolicy: { ttlSecondsAfterFinished: 60 }
              },
              { tag: `sha256:${hex("d")}`, version: 0, imagePullPolicy: "IfNotPresent", pullPolicy: { ttlSecondsAfterFinished: 60 } }
            ]
          }
        }
      },
      {
        nginx: {
          tags: [
            { tag: "1.25", phase: "Succeeded", version: 1, completionTime: "1970-01-01T00:00:10Z" },
            { tag: `sha256:${hex("d")}`, phase: "Succeeded", version: 3, completionTime: "1970-01-01T00:00:10Z" }
          ]
        }
      }
    )
    expect(tags).toEqual([
      { reference: "nginx:1.25", owners: [never], expiresAt: 70_000 },
      { reference: `nginx@sha256:${hex("d")}`, owners: [] }
    ])
  })
})

describe("decidePins: label changes on the node's image records", () => {
  it("pins every record of the wanted image: its id, tag and digest names", () => {
    const changes = decidePins(["nginx:1.25"], [nginx, redis], [...recordsOf(nginx), ...recordsOf(redis)])
    expect(changes).toEqual({ pin: [nginx.id, ...nginx.repoTags, ...nginx.repoDigests], unpin: [] })
  })

  it("a digest reference finds the image by its repoDigest; docker.io and library/ are normalised", () => {
    const changes = decidePins([`docker.io/nginx@sha256:${hex("d")}`], [nginx], recordsOf(nginx))
    expect(changes.pin).toHaveLength(3)
  })

  it("already pinned records are left alone; an image not on the node pins nothing", () => {
    expect(decidePins(["nginx:1.25", "busybox:1"], [nginx], recordsOf(nginx, ours))).toEqual({ pin: [], unpin: [] })
  })

  it("unpins the records it pinned that no wanted image names", () => {
    const records = [...recordsOf(nginx, ours), ...recordsOf(redis)]
    expect(decidePins([], [nginx, redis], records)).toEqual({ pin: [], unpin: [nginx.id, ...nginx.repoTags, ...nginx.repoDigests] })
  })

  it("never unpins a pin someone else set (no preheat marker), and does not claim it when wanted", () => {
    const foreign = recordsOf(nginx, { [pinnedLabel]: "pinned" })
    expect(decidePins([], [nginx], foreign)).toEqual({ pin: [], unpin: [] })
    expect(decidePins(["nginx:1.25"], [nginx], foreign)).toEqual({ pin: [], unpin: [] })
  })

  it("a marker whose pin label someone removed: pinned again when wanted, marker removed when not", () => {
    const stripped = recordsOf(nginx, { [preheatPinLabel]: "true" })
    expect(decidePins(["nginx:1.25"], [nginx], stripped).pin).toHaveLength(3)
    expect(decidePins([], [nginx], stripped).unpin).toHaveLength(3)
  })

  it("a tag that moved to a new image: the new image's records are pinned, the old image's unpinned", () => {
    const moved: ImageInfo = { id: `sha256:${hex("c")}`, repoTags: ["docker.io/library/nginx:1.25"], repoDigests: [], size: 1 }
    const old: ImageInfo = { ...nginx, repoTags: [] }
    const records = [
      { name: old.id, labels: ours },
      { name: old.repoDigests[0]!, labels: ours },
      // containerd keeps the tag record's labels when CRI points it at the new image.
      { name: "docker.io/library/nginx:1.25", labels: ours },
      { name: moved.id, labels: {} }
    ]
    expect(decidePins(["nginx:1.25"], [old, moved], records)).toEqual({ pin: [moved.id], unpin: [old.id, old.repoDigests[0]] })
  })
})
