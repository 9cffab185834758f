import { randomBytes } from "node:crypto"
import { statfsSync } from "node:fs"
import { join } from "node:path"
import { Duration, Effect, Option, Result } from "effect"
import { expect, it } from "vitest"
import type { ImageTagStatus } from "../../src/api/nodeImage.ts"
import { CriRuntime } from "../../src/cri/CriRuntime.ts"
import { FilesystemStats } from "../../src/cri/FilesystemStats.ts"
import { formatBytes, parseMinFreeDisk } from "../../src/daemon/minFreeDisk.ts"
import { daemonOptions } from "../../src/daemon/options.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import { publishImage, type Registry } from "../support/imageBuilder.ts"
import { eventually } from "../support/eventually.ts"
import { inProcessDaemons } from "./daemonRuntime.ts"
import { describeE2e } from "./describeE2e.ts"

const run = randomBytes(4).toString("hex")
const secretNamespace = "preheat-daemon-config"

const statfsBytes = (path: string) => {
  const stats = statfsSync(path)
  return { totalBytes: stats.blocks * stats.bsize, freeBytes: stats.bavail * stats.bsize }
}

describeE2e("room on the disk, against a real containerd", (e) => {
  const plain: Registry = { host: e.registry }
  // runtime.sh gives containerd its own root: its snapshotter's directory holds the images.
  const mountpoint = join(e.dir, "containerd", "root", `io.containerd.snapshotter.v1.${e.snapshotter}`)
  const daemons = inProcessDaemons(e, run)
  const { exec, tagStatus } = daemons

  const imageFs = () => exec(Effect.flatMap(Effect.service(CriRuntime), (cri) => cri.imageFsInfo))

  /** A daemon with `--min-free-disk minFreeDisk` pulls `name:v1` on a node of its own; resolves with the tag's final status. */
  const pullWith = async (minFreeDisk: string, name: string, node: string): Promise<ImageTagStatus> => {
    await exec(
      daemons.api.create(resources.nodeImage, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "NodeImage",
        metadata: { name: node },
        spec: { images: { [name]: { tags: [{ tag: "v1", version: 0, pullPolicy: { backoffLimit: 0 } }] } } }
      })
    )
    const options = daemonOptions({ nodeName: node, secretNamespace, minFreeDisk: Result.getOrThrow(parseMinFreeDisk(minFreeDisk)) })
    return daemons.withDaemon(options, () =>
      eventually(
        `${node} ${name}:v1 to finish`,
        async () => {
          const status = await tagStatus(node, name, "v1")
          return status?.phase === "Succeeded" || status?.phase === "Failed" ? status : undefined
        },
        60_000,
        50
      )
    )
  }

  it("ImageFsInfo names containerd's snapshotter directory and the bytes its images take; statfs sizes that filesystem", async () => {
    const image = await publishImage(plain, `e2e/disk-usage-${run}`, [{ size: 2_000_000, seed: `${run}-usage` }], ["v1"])
    await exec(
      Effect.flatMap(Effect.service(CriRuntime), (cri) =>
        cri.pullImage({ image: `${e.registry}/${image.repository}:v1`, timeout: Duration.seconds(60) })
      )
    )
    const [first] = await imageFs()
    expect(first?.mountpoint).toBe(mountpoint)
    // containerd measures its snapshotter directory now and then (every 10 s by default), not at each call.
    const deadline = performance.now() + 60_000
    let used = first?.usedBytes ?? 0
    while (used <= 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500))
      used = (await imageFs())[0]?.usedBytes ?? 0
    }
    expect(used).toBeGreaterThan(0)
    expect(used).toBeLessThan(statfsBytes(mountpoint).totalBytes)
    const size = await exec(Effect.flatMap(Effect.service(FilesystemStats), (fs) => fs.statfs(mountpoint)))
    expect(size.totalBytes).toBe(statfsBytes(mountpoint).totalBytes)
    expect(size.freeBytes).toBeGreaterThan(0)
    expect(size.freeBytes).toBeLessThanOrEqual(size.totalBytes)
  })

  it("--min-free-disk above the free space: the tag fails with InsufficientDisk and the real figures, without pulling", async () => {
    const image = await publishImage(plain, `e2e/disk-full-${run}`, [{ size: 300_000, seed: `${run}-full` }], ["v1"])
    const name = `${e.registry}/${image.repository}`
    const node = `disk-full-${run}`
    const status = await pullWith("100%", name, node)
    const { totalBytes, freeBytes } = statfsBytes(mountpoint)
    expect(status.phase).toBe("Failed")
    const figures =
      /insufficient disk: ([\d.]+)(Ki|Mi|Gi|Ti) free of (\S+) on the image filesystem (\S+), below --min-free-disk 100% \((\S+)\)$/.exec(
        status.message ?? ""
      )
    expect(figures, status.message).not.toBeNull()
    const [, free, unit, total, path, threshold] = figures!
    expect(total).toBe(formatBytes(totalBytes))
    expect(threshold).toBe(formatBytes(totalBytes))
    expect(path).toBe(mountpoint)
    // Other tests share this disk: the free figure is the one read at the check, within 1 GiB of now.
    const units = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 } as const
    expect(Math.abs(Number(free) * units[unit as keyof typeof units] - freeBytes)).toBeLessThan(2 ** 30)
    const events = (await exec(daemons.api.list(resources.event))).items.filter(
      (event) => (event["involvedObject"] as { name?: string }).name === node
    )
    expect(events.map((event) => event["reason"])).toEqual(["InsufficientDisk"])
    const present = await exec(Effect.flatMap(Effect.service(CriRuntime), (cri) => cri.imageStatus(`${name}:v1`)))
    expect(Option.isNone(present)).toBe(true)
    expect(await exec(Effect.flatMap(Effect.service(Metrics), (m) => m.read("preheat_image_fs_capacity_bytes", { mountpoint })))).toBe(
      totalBytes
    )
  })

  it("--min-free-disk within the free space: the tag is pulled", async () => {
    const image = await publishImage(plain, `e2e/disk-room-${run}`, [{ size: 300_000, seed: `${run}-room` }], ["v1"])
    const status = await pullWith("1Mi", `${e.registry}/${image.repository}`, `disk-room-${run}`)
    expect(status).toMatchObject({ phase: "Succeeded", imageID: image.imageId })
  })
})
