/**
 * Images the scheduler cannot see (issue 39) through kubectl on `preheat dev`: its simulated
 * kubelets list their nodes' 50 largest images in status.images, as the kubelet does. 50 images
 * pulled onto node-1, then a smaller one: node-1 lists the 50 and not the small one, its daemon
 * (given the kubelets' cap) marks the small tag `unreported`, and the small one's job gets
 * ImageUnreported=True naming node-1, with one Warning; a job on the node's listed images gets nothing.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { simulatedImageSize } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { parseImageReference } from "../../src/api/imageReference.ts"
import { eventually } from "../support/eventually.ts"
import { withDev } from "./devProcess.ts"

const Mi = 2 ** 20
const sizeOf = (image: string) => simulatedImageSize(Result.getOrThrow(parseImageReference(image)))

/** Names whose simulated size is small (pulls in well under a second), and one smaller than all of them. */
const candidates = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `registry.example.com/unreported/${prefix}-${i}:1`)
const small = candidates("small", 5000).find((image) => sizeOf(image) === 20 * Mi)!
const fillers = candidates("filler", 5000)
  .filter((image) => sizeOf(image) > 20 * Mi && sizeOf(image) <= 40 * Mi)
  .slice(0, 50)

const listJob = `apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata: {name: fillers, namespace: default}
spec:
  images: [${fillers.join(", ")}]
  parallelism: 1
  selector: {names: [node-1]}
  completionPolicy: {type: Always}
`

const smallJob = `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: small, namespace: default}
spec:
  image: ${small}
  parallelism: 1
  selector: {names: [node-1]}
  completionPolicy: {type: Never}
`

interface Condition {
  readonly type: string
  readonly status: string
  readonly message?: string
}

describe("preheat dev: an image the kubelet leaves out of status.images", () => {
  it("50 larger images listed on node-1, the small one not: ImageUnreported with one Warning", async () => {
    expect(small).toBeDefined()
    expect(fillers).toHaveLength(50)
    await withDev({ nodes: 2, prefix: "preheat-dev-unreported-" }, async (dev) => {
      const { kubectl } = dev
      await dev.apply("fillers", listJob)
      await eventually(
        "the 50 images pulled on node-1",
        async () => {
          const succeeded = await kubectl(["get", "iplj", "fillers", "-o", "jsonpath={.status.succeeded}"])
          return succeeded === "50" ? true : undefined
        },
        150_000
      )
      await dev.apply("small", smallJob)
      await eventually(
        "the small image pulled",
        async () => ((await kubectl(["get", "ipj", "small", "-o", "jsonpath={.status.succeeded}"])) === "1" ? true : undefined),
        60_000
      )
      const condition = await eventually(
        "ImageUnreported on the small image's job",
        async () => {
          const conditions: ReadonlyArray<Condition> = JSON.parse(
            (await kubectl(["get", "ipj", "small", "-o", "jsonpath={.status.conditions}"])) || "[]"
          )
          return conditions.find((c) => c.type === "ImageUnreported" && c.status === "True")
        },
        90_000
      )
      expect(condition.message).toContain(`"${small}" is on node-1 but its Node status.images leaves it out`)
      expect(condition.message).toContain("nodeStatusMaxImages")
      // node-1's daemon marked the small tag, which the controller read; not the listed ones.
      const statuses: Record<string, { tags: ReadonlyArray<{ unreported?: boolean }> }> = JSON.parse(
        await kubectl(["get", "nodeimage", "node-1", "-o", "jsonpath={.status.imageStatuses}"])
      )
      const smallName = small.slice(0, small.lastIndexOf(":"))
      expect(statuses[smallName]?.tags[0]?.unreported).toBe(true)
      for (const filler of fillers) expect(statuses[filler.slice(0, filler.lastIndexOf(":"))]?.tags[0]?.unreported).toBeUndefined()
      // What the scheduler reads: node-1's 50 largest images, the small one not among them.
      const listed: ReadonlyArray<{ names: ReadonlyArray<string>; sizeBytes: number }> = JSON.parse(
        await kubectl(["get", "node", "node-1", "-o", "jsonpath={.status.images}"])
      )
      expect(listed).toHaveLength(50)
      const names = listed.flatMap((image) => image.names)
      expect(names.some((name) => name.startsWith("registry.example.com/unreported/small-"))).toBe(false)
      for (const filler of fillers) expect(names).toContain(filler)
      const warnings = JSON.parse(
        await kubectl(["get", "events", "--field-selector", "reason=ImageUnreported,involvedObject.name=small", "-o", "json"])
      ).items as ReadonlyArray<{ type: string; count?: number; message: string }>
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatchObject({ type: "Warning" })
      expect(warnings[0]!.message).toContain("is on 1 node (node-1)")
      // The list job's children are on the list: none of them has the condition.
      const children = JSON.parse(await kubectl(["get", "ipj", "-l", "imagelistpulljob.apps.kruise.io/template-hash", "-o", "json"]))
        .items as ReadonlyArray<{ status?: { conditions?: ReadonlyArray<Condition> } }>
      expect(children.length).toBeGreaterThan(0)
      for (const child of children) expect(child.status?.conditions?.some((c) => c.type === "ImageUnreported")).not.toBe(true)
    })
  }, 360_000)
})
