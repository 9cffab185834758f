/**
 * Digest consistency (issue 28) through kubectl on `preheat dev`: a tag moved in the simulated
 * registry (the ConfigMap simulated-registry) while a job covers more nodes leaves the job's nodes
 * on two digests: the job lists both, has DigestMismatch with one Warning, and `preheat status`
 * says so; switched to imagePullPolicy Always (a new generation), every node pulls again and the
 * job converges on the tag's current digest.
 */
import { describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { preheatStatus, withDev } from "./devProcess.ts"

const image = "registry.example.com/digest/app"

interface Status {
  readonly succeeded?: number
  readonly observedGeneration?: number
  readonly imageDigests?: ReadonlyArray<{ readonly digest: string; readonly nodes: number }>
  readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string; readonly message?: string }>
}

const job = (names: ReadonlyArray<string>, policy: string) => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: moving
  namespace: default
spec:
  image: ${image}:latest
  imagePullPolicy: ${policy}
  parallelism: 3
  selector:
    names: [${names.join(", ")}]
  completionPolicy:
    type: Never
`

describe("preheat dev: one digest per tag", () => {
  it("a tag moved mid-job shows as DigestMismatch in kubectl and preheat status; Always and a new generation converge", async () => {
    await withDev({ nodes: 3, prefix: "preheat-dev-digest-" }, async (dev) => {
      const { kubectl } = dev
      const status = async (): Promise<Status> => JSON.parse((await kubectl(["get", "ipj", "moving", "-o", "jsonpath={.status}"])) || "{}")
      const mismatch = (s: Status) => s.conditions?.find((c) => c.type === "DigestMismatch")
      const tagDigest = async (node: string): Promise<{ version: number; phase: string; digest?: string } | undefined> => {
        const object = JSON.parse(await kubectl(["get", "nodeimage", node, "-o", "json"]))
        return object.status?.imageStatuses?.[image]?.tags?.[0]
      }

      await dev.apply("moving", job(["node-1", "node-2"], "IfNotPresent"))
      const first = await eventually(
        "two nodes on one digest",
        async () => {
          const s = await status()
          return s.succeeded === 2 && s.imageDigests?.length === 1 ? s.imageDigests[0]!.digest : undefined
        },
        90_000
      )
      expect(mismatch(await status())).toBeUndefined()

      // The tag moves in the registry; node-3 sees it once its daemon pulls the tag (a hand-written
      // Always tag, pulled again until the move shows: the registry follows the ConfigMap by a watch).
      await kubectl(["create", "configmap", "simulated-registry", `--from-literal=push-1=${image}:latest`])
      let version = 0
      const moved = await eventually(
        "node-3 to pull the moved tag",
        async () => {
          const tags = JSON.stringify([{ tag: "latest", version, imagePullPolicy: "Always" }])
          await kubectl(["patch", "nodeimage", "node-3", "--type=merge", "-p", `{"spec":{"images":{"${image}":{"tags":${tags}}}}}`])
          const pulled = await eventually(`node-3 version ${version}`, async () => {
            const tag = await tagDigest("node-3")
            return tag?.version === version && tag.phase === "Succeeded" ? tag : undefined
          })
          version++
          return pulled.digest !== first ? pulled.digest : undefined
        },
        90_000
      )
      expect(moved).toMatch(/^sha256:[a-f0-9]{64}$/)

      // The job now covers node-3 too: its nodes resolved two digests.
      await dev.apply("moving", job(["node-1", "node-2", "node-3"], "IfNotPresent"))
      const mixed = await eventually(
        "DigestMismatch",
        async () => {
          const s = await status()
          return mismatch(s)?.status === "True" ? s : undefined
        },
        90_000
      )
      expect([...(mixed.imageDigests ?? [])]).toEqual([
        { digest: first, nodes: 2 },
        { digest: moved, nodes: 1 }
      ])
      expect(mismatch(mixed)?.message).toContain(`${moved} on node-3`)
      await kubectl(["wait", "ipj/moving", "--for=condition=DigestMismatch", "--timeout=30s"])
      const events = await kubectl(["get", "events", "-n", "default", "-o", "jsonpath={.items[*].reason}"])
      expect(events.split(" ").filter((r) => r === "DigestMismatch")).toHaveLength(1)

      const view = await preheatStatus(dev, ["moving", "-n", "default"])
      expect(view).toContain("DigestMismatch")
      expect(view).toContain(`${moved} on node-3`)

      // Always, and a new generation: every node pulls again and they agree on the current digest.
      await dev.apply("moving", job(["node-1", "node-2", "node-3"], "Always"))
      const converged = await eventually(
        "the nodes converged",
        async () => {
          const s = await status()
          return s.observedGeneration === 3 && s.succeeded === 3 && mismatch(s)?.status === "False" ? s : undefined
        },
        90_000
      )
      expect(converged.imageDigests).toEqual([{ digest: moved, nodes: 3 }])
      await kubectl(["wait", "ipj/moving", "--for=condition=DigestMismatch=false", "--timeout=30s"])
    })
  }, 600_000)
})
