import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { beforeAll, expect, it } from "vitest"
import { ImageLabels } from "../../src/cri/ImageLabels.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { pinnedLabel, preheatPinLabel } from "../../src/daemon/pins/pinDecision.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { type PushedImage, publishImage } from "../support/imageBuilder.ts"
import { eventually } from "../support/eventually.ts"
import { inProcessDaemons } from "./daemonRuntime.ts"
import { describeE2e } from "./describeE2e.ts"

const run = randomBytes(4).toString("hex")

/** The names containerd's CRI plugin stores for one pulled image: the tag, the digest name, the id. */
const recordNames = (registry: string, image: PushedImage): ReadonlyArray<string> =>
  [`${registry}/${image.repository}:v1`, `${registry}/${image.repository}@${image.digest}`, image.imageId].sort()

/** `ctr images ls` (written elsewhere, so a second opinion on what our client reads): REF -> LABELS column. */
const ctrLabels = (socket: string): ReadonlyMap<string, string> => {
  const listed = spawnSync("ctr", ["--address", socket, "--namespace", "k8s.io", "images", "ls"], { encoding: "utf8" })
  if (listed.status !== 0) throw new Error(`ctr images ls failed: ${listed.stderr}`)
  const rows = new Map<string, string>()
  for (const line of listed.stdout.split("\n").slice(1)) {
    const columns = line.trim().split(/\s+/)
    // REF TYPE DIGEST SIZE (number and unit) PLATFORMS LABELS
    if (columns.length >= 7) rows.set(columns[0]!, columns[columns.length - 1]!)
  }
  return rows
}

const ctr = (socket: string, ...args: ReadonlyArray<string>) => {
  const result = spawnSync("ctr", ["--address", socket, "--namespace", "k8s.io", ...args], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`ctr ${args.join(" ")} failed: ${result.stderr}`)
}

describeE2e("--pin-images against a real containerd", (e) => {
  const registry = { host: e.registry }
  const daemons = inProcessDaemons(e, run)
  const { exec } = daemons
  let warmImage: PushedImage
  let onceImage: PushedImage

  beforeAll(async () => {
    warmImage = await publishImage(registry, `e2e/pin-warm-${run}`, [{ size: 100_000, seed: `${run}-warm` }], ["v1"])
    onceImage = await publishImage(registry, `e2e/pin-once-${run}`, [{ size: 100_000, seed: `${run}-once` }], ["v1"])
  })

  const job = (name: string, type: "Always" | "Never", image: string) =>
    exec(
      daemons.api.create(resources.imagePullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImagePullJob",
        metadata: { name, namespace: "default" },
        spec: { image, completionPolicy: { type } }
      })
    )

  const ownedTag = (owner: KubeObject) => ({
    tag: "v1",
    ownerReferences: [{ kind: "ImagePullJob", namespace: "default", name: owner.metadata.name, uid: owner.metadata.uid }]
  })

  /** Labels of our images' records, read through containerd's images API (our client). */
  const apiLabels = async (): Promise<ReadonlyMap<string, Readonly<Record<string, string>>>> => {
    const records = await exec(Effect.flatMap(Effect.service(ImageLabels), (labels) => labels.list))
    return new Map(
      records.filter((r) => r.name.includes(run) || [warmImage.imageId, onceImage.imageId].includes(r.name)).map((r) => [r.name, r.labels])
    )
  }
  const pinnedByApi = async () =>
    [...(await apiLabels())]
      .filter(([, labels]) => labels[pinnedLabel] === "pinned")
      .map(([name]) => name)
      .sort()
  const pinnedByCtr = () =>
    [...ctrLabels(e.socket)]
      .filter(
        ([name, labels]) =>
          (name.includes(run) || [warmImage.imageId, onceImage.imageId].includes(name)) &&
          labels.split(",").includes(`${pinnedLabel}=pinned`)
      )
      .map(([name]) => name)
      .sort()

  const until = (what: string, check: () => Promise<boolean>) =>
    eventually(what, async () => ((await check()) ? true : undefined), 30_000, 50)

  const tagPhase = async (node: string, image: string) => (await daemons.tagStatus(node, image, "v1"))?.phase

  const withDaemon = (node: string, body: () => Promise<void>) =>
    daemons.withDaemon(daemonOptions({ nodeName: node, pinImages: true, metricsPort: 0 }), body)

  it("pins every record of an image pulled for a Never job, not an Always job's; unpins when the tag goes", async () => {
    const node = `pin-${run}`
    const warm = `${e.registry}/${warmImage.repository}`
    const once = `${e.registry}/${onceImage.repository}`
    const warmJob = await job(`warm-${run}`, "Never", `${warm}:v1`)
    const onceJob = await job(`once-${run}`, "Always", `${once}:v1`)
    await exec(
      daemons.api.create(resources.nodeImage, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "NodeImage",
        metadata: { name: node },
        spec: { images: { [warm]: { tags: [ownedTag(warmJob)] }, [once]: { tags: [ownedTag(onceJob)] } } }
      })
    )
    const warmNames = recordNames(e.registry, warmImage)
    await withDaemon(node, async () => {
      await until("both pulls", async () => (await tagPhase(node, warm)) === "Succeeded" && (await tagPhase(node, once)) === "Succeeded")
      await until("the pins", async () => (await pinnedByApi()).length === 3)
      expect(await pinnedByApi()).toEqual(warmNames)
      const labels = await apiLabels()
      for (const name of warmNames) expect(labels.get(name)).toMatchObject({ [pinnedLabel]: "pinned", [preheatPinLabel]: "true" })
      // containerd's CRI plugin created these records (its own label says so): we labelled CRI's records.
      for (const name of warmNames) expect(labels.get(name)?.["io.cri-containerd.image"]).toBe("managed")
      expect(pinnedByCtr()).toEqual(warmNames)

      // The Never job's tag leaves the spec (job deleted): the pins go, the image stays.
      const current = await exec(daemons.api.get(resources.nodeImage, { name: node }))
      await exec(daemons.api.update(resources.nodeImage, { ...current, spec: { images: { [once]: { tags: [ownedTag(onceJob)] } } } }))
      await until("the unpin", async () => (await pinnedByApi()).length === 0)
      expect(pinnedByCtr()).toEqual([])
      const after = await apiLabels()
      for (const name of warmNames) {
        expect(after.get(name)).toBeDefined()
        expect(after.get(name)?.[preheatPinLabel]).toBeUndefined()
        expect(after.get(name)?.["io.cri-containerd.image"]).toBe("managed")
      }
    })
  })

  it("a restart unpins what preheat pinned and nothing wants; a pin set with ctr (no preheat marker) stays", async () => {
    const node = `restart-${run}`
    const onceTag = `${e.registry}/${onceImage.repository}:v1`
    const warmTag = `${e.registry}/${warmImage.repository}:v1`
    // What an earlier run with --pin-images left on the warm image, and an operator's own pin.
    ctr(e.socket, "images", "label", warmTag, `${pinnedLabel}=pinned`, `${preheatPinLabel}=true`)
    ctr(e.socket, "images", "label", onceTag, `${pinnedLabel}=pinned`)
    try {
      expect(await pinnedByApi()).toEqual([onceTag, warmTag].sort())
      const empty = { apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: node }, spec: {} }
      await exec(daemons.api.create(resources.nodeImage, empty))
      await withDaemon(node, async () => {
        await until("the start-up pass", async () => !(await pinnedByApi()).includes(warmTag))
      })
      expect(await pinnedByApi()).toEqual([onceTag])
      expect(pinnedByCtr()).toEqual([onceTag])
    } finally {
      ctr(e.socket, "images", "label", onceTag, `${pinnedLabel}=`)
    }
    expect(await pinnedByApi()).toEqual([])
  })
})
