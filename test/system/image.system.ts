/**
 * The image users deploy (issue 14), built by `npm run build:image` and proven on the real
 * containerd of the e2e suite: pushed to the local registry with skopeo, pulled by digest by
 * preheat's own daemon through CRI, run under runc (`ctr run`), and then run as the DaemonSet in
 * deploy/daemon.yaml declares it (args, env, user, security context, mounts, probes: read from
 * the manifest) against this test's API server and the containerd socket mounted into it, where
 * it pulls an image for its node. Where the runtime cannot be started the test is skipped with
 * the reason, except under PREHEAT_REQUIRE_E2E=1 (CI), where that is a failure.
 */
import { spawnSync } from "node:child_process"
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import type { E2eRuntime } from "../e2e/e2eEnv.ts"
import { publishImage } from "../support/imageBuilder.ts"
import type { PushedImage } from "../support/imageBuilder.ts"
import { ctrRunFor, specWithPod } from "../support/podToCtr.ts"
import { Cluster } from "./cluster.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/freePort.ts"
import { leaseRealRuntime } from "./realRuntimeLease.ts"

const root = resolve(import.meta.dirname, "../..")
const layoutDir = join(root, "dist", "image")

type Obj = Record<string, any>

/** The built layout: the index digest and, for this host's platform, the image id and entrypoint. */
interface Layout {
  readonly version: string
  readonly indexDigest: string
  readonly platforms: ReadonlyArray<string>
  readonly hostImageId: string
  readonly entrypoint: ReadonlyArray<string>
  /** The layer blob of each architecture. */
  readonly layers: Readonly<Record<string, string>>
}

const readBlob = (digest: string): Obj => JSON.parse(readFileSync(join(layoutDir, "blobs", "sha256", digest.slice(7)), "utf8"))

const readLayout = (): Layout => {
  const top = JSON.parse(readFileSync(join(layoutDir, "index.json"), "utf8")).manifests[0]
  const index = readBlob(top.digest)
  const hostArch = process.arch === "x64" ? "amd64" : process.arch
  const host = (index.manifests as Array<Obj>).find((m) => m.platform.architecture === hostArch)
  if (host === undefined) throw new Error(`the image index has no ${hostArch} image`)
  const manifest = readBlob(host.digest)
  const config = readBlob(manifest.config.digest)
  const layers = Object.fromEntries(
    (index.manifests as Array<Obj>).map((m) => [m.platform.architecture, readBlob(m.digest).layers[0].digest])
  )
  return {
    version: top.annotations["org.opencontainers.image.ref.name"],
    indexDigest: top.digest,
    platforms: (index.manifests as Array<Obj>).map((m) => `${m.platform.os}/${m.platform.architecture}`),
    hostImageId: manifest.config.digest,
    entrypoint: config.config.Entrypoint,
    layers
  }
}

const daemonSet = (): Obj => {
  const docs = parseAllDocuments(readFileSync(join(root, "deploy", "daemon.yaml"), "utf8")).map((d) => d.toJS() as Obj)
  const found = docs.find((d) => d?.kind === "DaemonSet")
  if (found === undefined) throw new Error("deploy/daemon.yaml has no DaemonSet")
  return found
}

const run = (command: string, args: ReadonlyArray<string>, timeout = 120_000) => {
  const result = spawnSync(command, args, { encoding: "utf8", timeout, maxBuffer: 16 * 1024 * 1024 })
  return { code: result.status, stdout: result.stdout ?? "", stderr: `${result.stderr ?? ""}${result.error?.message ?? ""}` }
}

let runtime: E2eRuntime | undefined
let cluster: Cluster | undefined
let layout: Layout | undefined
let reference = ""
let smallImage: PushedImage | undefined
let skipReason: string | undefined
let releaseRuntime = () => {}
let work = ""
const containers: Array<string> = []
const mounted: Array<string> = []

const ctr = (args: ReadonlyArray<string>, timeout?: number) =>
  run("ctr", ["--address", runtime!.socket, "--namespace", "k8s.io", ...args], timeout)

const removeContainer = (id: string): void => {
  ctr(["task", "kill", "--signal", "SIGKILL", id])
  for (let i = 0; i < 50 && ctr(["task", "delete", id]).code !== 0 && ctr(["task", "ls", "-q"]).stdout.includes(id); i++) {
    spawnSync("sleep", ["0.1"])
  }
  ctr(["container", "delete", id])
}

beforeAll(async () => {
  const lease = await leaseRealRuntime("the image test")
  releaseRuntime = lease.release
  if ("skipReason" in lease) {
    skipReason = lease.skipReason
    return
  }
  runtime = lease.runtime
  work = mkdtempSync(join(tmpdir(), "preheat-image-"))

  // The image from the executable the test command built (dist/preheat), as a user builds it.
  const built = run(process.execPath, ["--experimental-strip-types", "--no-warnings", join(root, "build", "image.ts")], 300_000)
  if (built.code !== 0) throw new Error(`npm run build:image failed:\n${built.stdout}${built.stderr}`)
  process.stdout.write(built.stdout)
  layout = readLayout()

  // A repository per run, so the pull below cannot be satisfied by an earlier run's image name.
  const repository = `preheat-test/preheat-${Date.now()}`
  const pushed = run("skopeo", [
    "copy",
    "--all",
    "--quiet",
    "--dest-tls-verify=false",
    `oci:${layoutDir}:${layout.version}`,
    `docker://${runtime.registry}/${repository}:${layout.version}`
  ])
  if (pushed.code !== 0) throw new Error(`skopeo copy failed: ${pushed.stderr}`)
  reference = `${runtime.registry}/${repository}@${layout.indexDigest}`
  const small = [{ size: 100_000, seed: "image" }]
  smallImage = await publishImage({ host: runtime.registry }, `preheat-test/small-${Date.now()}`, small, ["v1"])

  const socket = runtime.socket
  cluster = await Cluster.startWith(async (started) => {
    await started.createNodes(["image-host", "image-container"], { "node-type": "image" })
    await started.startController("controller", await freePort())
    await started.startDaemon("image-host", await freePort(), socket)
  })
}, 400_000)

afterAll(async () => {
  for (const id of containers.filter((c) => !c.endsWith("-base"))) removeContainer(id)
  for (const path of mounted) run("umount", [path])
  for (const id of containers.filter((c) => c.endsWith("-base"))) removeContainer(id)
  await cluster?.stop()
  if (work !== "") rmSync(work, { recursive: true, force: true })
  releaseRuntime()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    if (cluster !== undefined) console.error(cluster.dumpLogs())
    for (const id of containers) {
      const log = join(work, `${id}.log`)
      if (existsSync(log)) console.error(`===== container ${id} =====\n${readFileSync(log, "utf8").split("\n").slice(-100).join("\n")}`)
    }
  })
})

const pullJob = async (name: string, image: string, node: string): Promise<void> => {
  const applied = await cluster!.applyFile(
    name,
    `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: ${name}
spec:
  image: ${image}
  selector:
    names: [${node}]
`
  )
  expect(applied.stderr).toBe("")
  await cluster!.ok(["wait", `ipj/${name}`, "--for=jsonpath={.status.completionTime}", "--timeout=90s"])
  const job = await cluster!.getYaml(["ipj", name])
  expect(job.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 })
}

describe("the preheat image on the real containerd", () => {
  it("is pulled by digest by preheat's own daemon through CRI and runs under runc", async (context) => {
    if (skipReason !== undefined) context.skip()
    expect(layout!.platforms).toEqual(["linux/amd64", "linux/arm64"])
    // The arm64 image runs on its own root file system (its loader and libraries), emulated.
    const arm64 = join(work, "arm64-rootfs")
    mkdirSync(arm64)
    expect(run("tar", ["-xzf", join(layoutDir, "blobs", "sha256", layout!.layers["arm64"]!.slice(7)), "-C", arm64]).code).toBe(0)
    const emulated = run("qemu-aarch64-static", ["-L", arm64, join(arm64, layout!.entrypoint[0]!), "version"])
    expect(emulated.stderr).toBe("")
    expect(emulated.stdout).toMatch(/^preheat \d/)

    await pullJob("image-self", reference, "image-host")
    const node = await cluster!.getYaml(["nodeimage", "image-host"])
    const [name, digest] = reference.split("@")
    const tags = node.status.imageStatuses[name!].tags
    expect(tags[0]).toMatchObject({ tag: digest, phase: "Succeeded", imageID: layout!.hostImageId })

    // As the image's own user (65532), with the image's entrypoint.
    const base = ["run", "--rm", "--net-host", "--snapshotter", runtime!.snapshotter, reference]
    const version = ctr([...base, `preheat-version-${Date.now()}`, ...layout!.entrypoint, "version"])
    expect(version.stderr).toBe("")
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(new RegExp(`^preheat ${layout!.version.replace(/\./g, "\\.")}\\b`))
    const help = ctr([...base, `preheat-help-${Date.now()}`, ...layout!.entrypoint, "daemon", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("--host-run-dir")
  })

  it("runs the daemon as deploy/daemon.yaml declares it, on the mounted socket, and pulls for its node", async (context) => {
    if (skipReason !== undefined) context.skip()
    const spec = daemonSet().spec.template.spec
    // The node's /var/run as the hostPath volume sees it: containerd's socket at containerd/containerd.sock
    // (a hard link to this runtime's socket: connecting needs only the inode).
    const hostRun = join(work, "host-var-run")
    mkdirSync(join(hostRun, "containerd"), { recursive: true })
    linkSync(runtime!.socket, join(hostRun, "containerd", "containerd.sock"))
    const tmp = join(work, "emptydir-tmp")
    mkdirSync(tmp)
    // The node's /var/lib/containerd: this runtime keeps its store elsewhere (PREHEAT_E2E_DIR), so
    // the daemon cannot tell the image filesystem's free room here and pulls unchecked, as on a
    // node whose store is not where the manifest mounts it.
    const hostContainerd = join(work, "host-containerd")
    mkdirSync(hostContainerd)
    // The kubelet's configuration file as a kubeadm node keeps it, with a KEP-2535 policy the daemon
    // must read through the manifest's mount and report.
    const kubeletConfig = join(work, "kubelet-config.yaml")
    writeFileSync(
      kubeletConfig,
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimagePullCredentialsVerificationPolicy: AlwaysVerify\n"
    )
    const metricsPort = await freePort()
    const translated = ctrRunFor({
      podSpec: spec,
      entrypoint: layout!.entrypoint,
      volumeSources: { "host-var-run": hostRun, "host-containerd": hostContainerd, "kubelet-config": kubeletConfig, tmp },
      nodeName: "image-container",
      // Host networking here, so the manifest's fixed port could be taken by another test run.
      argOverrides: { "--metrics-port": String(metricsPort) },
      // In a cluster the service account gives the API server's address and credentials.
      extraArgs: ["--kubeconfig=/etc/preheat-test/kubeconfig"],
      extraMounts: [{ source: cluster!.dir, destination: "/etc/preheat-test" }]
    })
    // The container and its snapshot as ctr makes them from the flags; then the spec gets the pod's
    // user and capabilities (ctr 1.6 has no flags for them) and runs on that snapshot, mounted.
    const id = `preheat-daemon-${Date.now()}`
    const base = `${id}-base`
    containers.push(base)
    // Host networking: this API server listens on loopback (in a cluster: the Service address).
    const created = ctr([
      "container",
      "create",
      "--net-host",
      "--snapshotter",
      runtime!.snapshotter,
      ...translated.flags,
      reference,
      base,
      ...translated.command
    ])
    expect(created.stderr).toBe("")
    const rootfs = join(work, "rootfs")
    mkdirSync(rootfs)
    const mountLine = ctr(["snapshots", "--snapshotter", runtime!.snapshotter, "mounts", rootfs, base]).stdout.trim().split(/\s+/)
    expect(mountLine[0]).toBe("mount")
    const mountedNow = run("mount", mountLine.slice(1))
    expect(mountedNow.stderr).toBe("")
    mounted.push(rootfs)
    const specFile = join(work, "spec.json")
    writeFileSync(specFile, JSON.stringify(specWithPod(JSON.parse(ctr(["container", "info", "--spec", base]).stdout), translated, rootfs)))
    containers.push(id)
    const started = ctr(["run", "--detach", "--config", specFile, "--log-uri", `file://${join(work, `${id}.log`)}`, id])
    expect(started.stderr).toBe("")
    expect(started.code).toBe(0)

    const container = spec.containers[0]
    for (const probe of [container.livenessProbe, container.readinessProbe]) {
      await eventually(
        `the container's ${probe.httpGet.path}`,
        async () => {
          const response = await fetch(`http://127.0.0.1:${metricsPort}${probe.httpGet.path}`)
          return response.ok ? true : undefined
        },
        30_000,
        250
      )
    }
    // The task runs as the manifest's user with every capability dropped and no new privileges.
    const pid = /\b(\d+)\s+RUNNING/.exec(
      ctr(["task", "ls"])
        .stdout.split("\n")
        .find((l) => l.startsWith(id)) ?? ""
    )?.[1]
    expect(pid).toBeDefined()
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    expect(status).toMatch(new RegExp(`^Uid:\\s+${spec.securityContext.runAsUser}\\s`, "m"))
    expect(status).toMatch(/^CapEff:\s+0+$/m)
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m)
    expect(status).toMatch(/^Seccomp:\s+2$/m)

    await pullJob("image-in-container", smallImage!.reference("v1"), "image-container")
    const node = await cluster!.getYaml(["nodeimage", "image-container"])
    const key = `${runtime!.registry}/${smallImage!.repository}`
    expect(node.status.imageStatuses[key].tags[0]).toMatchObject({ tag: "v1", phase: "Succeeded", imageID: smallImage!.imageId })
    expect(node.status.kubeletImageVerification).toMatchObject({ policy: "AlwaysVerify" })
  })
})
