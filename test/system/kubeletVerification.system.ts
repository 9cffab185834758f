/**
 * KEP-2535 with the built bundle as separate processes (API server, controller, a daemon on the
 * simulated runtime whose `--host-root` holds a kubelet configuration file), driven with kubectl,
 * and `preheat allowlist` and `preheat status` run from the executable (or the bundle where only
 * `npm run build` ran): the daemon reads the node's policy into its NodeImage status and metrics,
 * the job says its pods will check credentials with the registry at start, and the allowlist the
 * command prints, put into the kubelet's configuration, ends that.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"
import { Cluster, type Process, scrape } from "./cluster.ts"

const root = resolve(import.meta.dirname, "../..")
const executable = join(root, "dist/preheat")
const bundle = join(root, "dist/preheat.mjs")

let cluster: Cluster
let hostRoot = ""
let daemon: Process | undefined
let daemonPort = 0

const kubeletConfig = (lines: string) =>
  writeFileSync(
    join(hostRoot, "var/lib/kubelet/config.yaml"),
    `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\nclusterDNS:\n- 10.96.0.10\n${lines}`
  )

/**
 * The daemon as the DaemonSet runs it, from the executable where it is built, the node's / at
 * --host-root (the default --kubelet-config under it).
 */
const startDaemon = async (on: Cluster = cluster) => {
  daemonPort = await freePort()
  const args = [
    "simulated-daemon",
    "--node-name",
    "node-1",
    "--kubeconfig",
    on.kubeconfig,
    "--host-root",
    hostRoot,
    "--metrics-port",
    String(daemonPort),
    "--metrics-host",
    "127.0.0.1"
  ]
  daemon = on.spawn("daemon-node-1", args, {}, existsSync(executable) ? "executable" : "node")
  await on.waitHealthy(daemon, daemonPort)
}

/** `preheat ARGS` as a user runs it: the executable `npm test` builds, else the bundle on this Node. */
const preheat = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const [file, prefix] = existsSync(executable) ? [executable, []] : [process.execPath, [bundle]]
    execFile(
      file,
      [...prefix, ...args, "--kubeconfig", cluster.kubeconfig],
      { timeout: 60_000, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

beforeAll(async () => {
  hostRoot = mkdtempSync(join(tmpdir(), "preheat-host-"))
  mkdirSync(join(hostRoot, "var/lib/kubelet"), { recursive: true })
  kubeletConfig("imagePullCredentialsVerificationPolicy: AlwaysVerify\n")
  cluster = await Cluster.startWith(async (cluster) => {
    await cluster.createNodes(["node-1"], {})
    await cluster.startController("controller", await freePort())
    await startDaemon(cluster)
    await eventually("node-1's NodeImage", async () =>
      (await cluster.kubectl(["get", "nodeimage", "node-1"])).code === 0 ? true : undefined
    )
  })
}, 120_000)

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

const condition = async (type: string) => {
  const job = await cluster.getYaml(["imagepulljob", "web", "-n", "default"])
  return (job?.status?.conditions ?? []).find((c: { type: string }) => c.type === type)
}

describe("the kubelet's image verification, end to end", () => {
  it("AlwaysVerify on the node: in its NodeImage and metrics; the job says pods check with the registry at start", async () => {
    const verification = await eventually("the node's policy in its NodeImage", async () => {
      const node = await cluster.getYaml(["nodeimage", "node-1"])
      return node?.status?.kubeletImageVerification?.policy === "AlwaysVerify" ? node.status.kubeletImageVerification : undefined
    })
    expect(verification).toEqual({ policy: "AlwaysVerify", source: "/var/lib/kubelet/config.yaml" })
    expect(await scrape(daemonPort)).toContain('preheat_node_image_verification_policy{policy="AlwaysVerify"} 1')

    const applied = await cluster.applyFile(
      "web",
      "apiVersion: apps.kruise.io/v1alpha1\nkind: ImagePullJob\nmetadata: {name: web, namespace: default}\n" +
        "spec: {image: nginx:1.25.3, completionPolicy: {type: Never}}\n"
    )
    expect(applied.code).toBe(0)
    const reverified = await eventually(
      "PreloadedImageReverified",
      async () => {
        const c = await condition("PreloadedImageReverified")
        return c?.status === "True" ? c : undefined
      },
      60_000
    )
    expect(reverified.message).toContain("on node-1: their kubelets verify images they did not pull (kubelet: AlwaysVerify)")
    const events = await cluster.ok(["get", "events", "-n", "default", "--field-selector", "reason=PreloadedImageReverified", "-o", "name"])
    expect(events.trim().split("\n")).toHaveLength(1)

    const status = await preheat(["status", "web", "-n", "default"])
    expect(status.code).toBe(0)
    expect(status.stdout).toContain(
      "PreloadedImageReverified  1 node makes pods check their credentials with the registry at start: node-1 AlwaysVerify"
    )
    expect(status.stdout).toContain("kubelet image verification  AlwaysVerify 1 node")
  })

  it("preheat allowlist's entries in the kubelet's configuration: pods start the image without a round trip", async () => {
    const printed = await preheat(["allowlist", "web", "-n", "default"])
    expect(printed).toMatchObject({ code: 0, stderr: "" })
    expect(printed.stdout).toContain("  - docker.io/library/nginx # ImagePullJob web\n")
    kubeletConfig(printed.stdout)
    // The kubelet reads its configuration when it starts; the daemon reads it at its own start too.
    await cluster.kill(daemon!, "SIGTERM")
    await startDaemon()
    const verification = await eventually("the allowlist in the NodeImage", async () => {
      const node = await cluster.getYaml(["nodeimage", "node-1"])
      const v = node?.status?.kubeletImageVerification
      return v?.policy === "NeverVerifyAllowlistedImages" ? v : undefined
    })
    expect(verification.allowlist).toEqual(["docker.io/library/nginx"])
    const cleared = await eventually("PreloadedImageReverified False", async () => {
      const c = await condition("PreloadedImageReverified")
      return c?.status === "False" ? c : undefined
    })
    expect(cleared.reason).toBe("NoNodeVerifiesAtStart")

    const missing = await preheat(["allowlist", "nothing", "-n", "default"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("error: no ImagePullJob or ImageListPullJob named nothing in namespace default\n")
  })
})
