/**
 * Issue 28 parts 2 and 3 through kubectl on `preheat dev`: a registry that throttles (the simulated
 * registry answers 429 to the first two pulls of an image from a `throttled.*` host) shows as a
 * `RegistryThrottled: ` tag message, and the pull still succeeds with backoffLimit 0; nodes whose
 * image disk (`--node-disk`) fills below `--min-free-disk` fail the rest with InsufficientDisk and
 * the figures, with Warning events of that reason.
 */
import { describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { withDev } from "./devProcess.ts"

const throttledImage = "throttled.example/app"

const throttledJob = `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: throttled
  namespace: default
spec:
  image: ${throttledImage}:1
  parallelism: 1
  selector:
    names: [node-1]
  pullPolicy:
    backoffLimit: 0
  completionPolicy:
    type: Always
`

const images = Array.from({ length: 10 }, (_, i) => `registry.example.com/room/app-${i}:1`)
const listJob = `apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata:
  name: filling
  namespace: default
spec:
  images: [${images.join(", ")}]
  parallelism: 1
  selector:
    names: [node-1]
  pullPolicy:
    backoffLimit: 0
  completionPolicy:
    type: Always
`

interface TagStatus {
  readonly phase?: string
  readonly message?: string
}

describe("preheat dev: registries that throttle, room on the disk", () => {
  it("a throttled pull says RegistryThrottled and succeeds; a filling disk fails the rest with InsufficientDisk", async () => {
    await withDev({ nodes: 1, prefix: "preheat-dev-room-", flags: ["--node-disk", "1Gi", "--min-free-disk", "500Mi"] }, async (dev) => {
      const { kubectl } = dev
      const tags = async (): Promise<Record<string, { tags?: ReadonlyArray<TagStatus> }>> =>
        JSON.parse((await kubectl(["get", "nodeimage", "node-1", "-o", "jsonpath={.status.imageStatuses}"])) || "{}")

      await dev.apply("throttled", throttledJob)
      const seen = new Set<string>()
      await eventually(
        "the throttled job to succeed",
        async () => {
          const tag = (await tags())[throttledImage]?.tags?.[0]
          if (tag?.message !== undefined) seen.add(tag.message)
          const succeeded = await kubectl(["get", "ipj", "throttled", "-n", "default", "-o", "jsonpath={.status.succeeded}"])
          return succeeded === "1" ? true : undefined
        },
        120_000
      )
      expect([...seen].some((m) => m.startsWith("RegistryThrottled: "))).toBe(true)

      await dev.apply("filling", listJob)
      const refused = await eventually(
        "a tag refused for want of room",
        async () => {
          const all = await tags()
          const failed = images.map((image) => all[image.split(":")[0]!]?.tags?.[0]).filter((t) => t?.phase === "Failed")
          return failed[0]
        },
        120_000
      )
      expect(refused?.message).toMatch(/insufficient disk: .* free of 1Gi on the image filesystem .*below --min-free-disk 500Mi/)
      const reasons = await kubectl(["get", "events", "-A", "-o", "jsonpath={.items[*].reason}"])
      expect(reasons.split(" ")).toContain("InsufficientDisk")
    })
  }, 600_000)
})
