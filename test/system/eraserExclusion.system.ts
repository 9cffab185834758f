/**
 * eraser's exclusion list (issue 39) through kubectl on `preheat dev --eraser-exclusion-namespace
 * eraser-system`: a Never job's image, normalised as the runtime reports its tag, and the digest its
 * nodes resolved appear in the one labelled ConfigMap eraser reads, an Always job's do not, an
 * ImageListPullJob's Never children's do; the list follows the jobs and goes with the last of them.
 */
import { describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { withDev } from "./devProcess.ts"

const jobs = `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: warm, namespace: default}
spec:
  image: nginx:1.25.3
  parallelism: 3
  completionPolicy: {type: Never}
---
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: once, namespace: default}
spec:
  image: busybox:1.36.1
  parallelism: 3
  completionPolicy: {type: Always}
`

const list = `apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata: {name: base, namespace: default}
spec:
  images: [redis:7.2, ghcr.io/team/cache:3]
  parallelism: 3
  completionPolicy: {type: Never}
`

describe("preheat dev: eraser's exclusion list", () => {
  it("lists the images Never jobs keep warm in the ConfigMap eraser reads, and follows the jobs", async () => {
    await withDev({ nodes: 3, prefix: "preheat-dev-eraser-", flags: ["--eraser-exclusion-namespace", "eraser-system"] }, async (dev) => {
      const { kubectl } = dev
      /** What eraser would read: the labelled ConfigMaps of its namespace, each one's `.json` file. */
      const excluded = async (): Promise<ReadonlyArray<string> | undefined> => {
        const found = JSON.parse(
          await kubectl(["get", "configmaps", "-n", "eraser-system", "-l", "eraser.sh/exclude.list=true", "-o", "json"])
        )
        const items = found.items as ReadonlyArray<{ metadata: { name: string }; data: Record<string, string> }>
        if (items.length === 0) return undefined
        expect(items.map((i) => i.metadata.name)).toEqual(["preheat-excluded-images"])
        const files = Object.keys(items[0]!.data)
        expect(files).toEqual(["excluded.json"])
        return (JSON.parse(items[0]!.data["excluded.json"]!) as { excluded: ReadonlyArray<string> }).excluded
      }
      expect(await excluded()).toBeUndefined()

      await dev.apply("jobs", jobs)
      const warm = await eventually(
        "the Never job's image and its digest listed",
        async () => {
          const entries = await excluded()
          return entries?.length === 2 ? entries : undefined
        },
        60_000
      )
      expect(warm[0]).toBe("docker.io/library/nginx:1.25.3")
      // The digest the nodes resolved, bare, as eraser compares repo digests; the job's own status names it.
      const digests = JSON.parse(await kubectl(["get", "ipj", "warm", "-o", "jsonpath={.status.imageDigests}"]))
      expect(warm[1]).toBe(digests[0].digest)
      expect(warm.some((entry) => entry.includes("busybox"))).toBe(false)

      await dev.apply("list", list)
      await eventually(
        "the list job's images listed too",
        async () => {
          const entries = await excluded()
          return entries?.includes("docker.io/library/redis:7.2") && entries.includes("ghcr.io/team/cache:3") ? entries : undefined
        },
        60_000
      )

      await kubectl(["delete", "ipj", "warm"])
      await kubectl(["delete", "iplj", "base"])
      await eventually("the list gone with the last Never job", async () => ((await excluded()) === undefined ? true : undefined), 60_000)
      expect(await kubectl(["get", "configmaps", "-n", "eraser-system", "-o", "name"])).not.toContain("preheat-excluded-images")
    })
  }, 240_000)
})
