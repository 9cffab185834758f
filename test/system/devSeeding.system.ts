/**
 * Seed-first fan-out (issue 39) through kubectl on `preheat dev --p2p`: a job annotated
 * `preheat.kruise.io/seed-nodes: "1"` gives its tag to one node first and to the others only once
 * that node's pull succeeded (their tags are created after the seed's pull completed), its message
 * and `preheat status` say it is seeding, and the simulated registry serves the image once; the
 * same job without the annotation sends every node to the registry. Dev's /metrics (--metrics-port)
 * counts what the registry and the peers served as the ConfigMap does.
 */
import { describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { preheatStatus, withDev } from "./devProcess.ts"

const mebibyte = 1024 * 1024

const job = (name: string, image: string, annotations: string) => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: ${name}
  namespace: default
  annotations: {${annotations}}
spec:
  image: ${image}
  parallelism: 3
`

interface Tag {
  readonly tag: string
  readonly createdAt?: string
  readonly ownerReferences?: ReadonlyArray<{ readonly name: string }>
}
interface TagStatus {
  readonly tag: string
  readonly phase: string
  readonly startTime?: string
  readonly completionTime?: string
}
interface Served {
  readonly image: string
  readonly registryBytes: number
  readonly peerBytes: number
  readonly pulls: number
}

describe("preheat dev --p2p: seed-first fan-out", () => {
  it("pulls on the seed first, the others from it once it succeeded: the registry serves the image once", async () => {
    await withDev({ nodes: 3, prefix: "preheat-dev-seeding-", flags: ["--p2p", "--metrics-port", "0"] }, async (dev) => {
      const { kubectl } = dev
      const metricsUrl = /^metrics of the controller, the daemons and the simulated registry: (http:\/\/\S+\/metrics)$/m.exec(
        dev.output()
      )?.[1]
      expect(metricsUrl).toBeDefined()
      /** A sample of dev's /metrics (no labels). */
      const scraped = async (name: string): Promise<number | undefined> => {
        const text = await (await fetch(metricsUrl!)).text()
        const value = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]
        return value === undefined ? undefined : Number(value)
      }
      const served = async (image: string): Promise<Served | undefined> => {
        const text = await kubectl(["get", "configmap", "simulated-registry-served", "-o", "jsonpath={.data.images}"])
        return (JSON.parse(text || "[]") as ReadonlyArray<Served>).find((s) => s.image === image)
      }
      const status = async (name: string) =>
        JSON.parse((await kubectl(["get", "ipj", name, "-o", "jsonpath={.status}"])) || "{}") as {
          readonly message?: string
          readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string; readonly reason: string }>
        }

      // 300 MiB: about 6 s from the registry, 1.3 s from a peer.
      const seededImage = "registry.example.com/size-300mi:seeded"
      await dev.apply("seeded", job("seeded", seededImage, `preheat.kruise.io/seed-nodes: "1"`))
      const seeding = await eventually("the job to say it seeds", async () => {
        const s = await status("seeded")
        return s.message?.startsWith("job is seeding") === true ? s : undefined
      })
      expect(seeding.message).toBe("job is seeding, 0 of 1 seed nodes pulled, progress 0.0%")
      expect(seeding.conditions?.find((c) => c.type === "Seeded")).toMatchObject({ status: "False", reason: "Seeding" })
      const view = await preheatStatus(dev, ["seeded", "-n", "default"])
      expect(view).toContain("running  seeding")

      await kubectl(["wait", "ipj/seeded", "--for=condition=Complete", "--timeout=60s"])
      expect((await status("seeded")).conditions?.find((c) => c.type === "Seeded")).toMatchObject({ status: "True", reason: "SeedsPulled" })

      // The seed's pull ended before the other nodes got their tag.
      const nodes = await Promise.all(
        ["node-1", "node-2", "node-3"].map(async (node) => {
          const object = JSON.parse(await kubectl(["get", "nodeimage", node, "-o", "json"]))
          const tag = ((object.spec?.images?.["registry.example.com/size-300mi"]?.tags ?? []) as ReadonlyArray<Tag>).find(
            (t) => t.tag === "seeded"
          )
          const reported = (
            (object.status?.imageStatuses?.["registry.example.com/size-300mi"]?.tags ?? []) as ReadonlyArray<TagStatus>
          ).find((t) => t.tag === "seeded")
          return { node, createdAt: Date.parse(tag?.createdAt ?? ""), completedAt: Date.parse(reported?.completionTime ?? "") }
        })
      )
      const byCreation = [...nodes].sort((a, b) => a.createdAt - b.createdAt)
      const seed = byCreation[0]!
      for (const other of byCreation.slice(1)) expect(other.createdAt).toBeGreaterThanOrEqual(seed.completedAt)

      // The registry served the image once, the peers the two other copies.
      const seededServed = await eventually("the registry's counts", async () => {
        const s = await served(seededImage)
        return s?.peerBytes === 600 * mebibyte ? s : undefined
      })
      expect(seededServed).toMatchObject({ registryBytes: 300 * mebibyte, peerBytes: 600 * mebibyte, pulls: 3 })
      const events = await kubectl([
        "get",
        "events",
        "-n",
        "default",
        "--field-selector",
        "reason=Seeded",
        "-o",
        "jsonpath={.items[*].message}"
      ])
      expect(events).toBe(`pulled "${seededImage}" on 1 node: starting the other 2`)

      // The same job without seeding: every node goes to the registry at once.
      const plainImage = "registry.example.com/size-300mi:plain"
      await dev.apply("plain", job("plain", plainImage, ""))
      await kubectl(["wait", "ipj/plain", "--for=condition=Complete", "--timeout=60s"])
      const plainServed = await eventually("the registry's counts", async () => {
        const s = await served(plainImage)
        return s?.pulls === 3 && s.registryBytes === 900 * mebibyte ? s : undefined
      })
      expect(plainServed.peerBytes).toBe(0)

      // The counters of dev's /metrics: the ConfigMap's totals, 300 + 900 MiB from the registry, 600 from peers.
      const totals = await eventually("the metrics and the ConfigMap to agree", async () => {
        const data = JSON.parse((await kubectl(["get", "configmap", "simulated-registry-served", "-o", "jsonpath={.data}"])) || "{}") as {
          readonly registryBytes?: string
          readonly peerBytes?: string
        }
        const both = {
          configMap: { registry: Number(data.registryBytes), peers: Number(data.peerBytes) },
          metrics: {
            registry: await scraped("preheat_simulated_registry_served_bytes_total"),
            peers: await scraped("preheat_simulated_peer_served_bytes_total")
          }
        }
        return both.configMap.registry === both.metrics.registry && both.configMap.peers === both.metrics.peers ? both : undefined
      })
      expect(totals.metrics).toEqual({ registry: 1200 * mebibyte, peers: 600 * mebibyte })
      expect(await (await fetch(new URL("/healthz", metricsUrl))).text()).toBe("ok")
      expect(dev.output()).toContain(`simulated registry: ${seededImage}: 0.29 GiB from the registry, 0.59 GiB from peers, 3 pulls`)
    })
  }, 300_000)
})
