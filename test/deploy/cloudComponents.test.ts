/**
 * deploy/components/: each cloud's kustomize component, rendered by kubectl's kustomize from the very
 * kustomization deploy/components/README.md shows, next to deploy/ rendered alone. The daemon gets
 * the kubelet's two credential-provider flags with the paths the cloud's node images use (the
 * sources are cited in each component), every hostPath the component adds is mounted read-only at
 * the path it has on the node, the daemon is on the host network, and nothing else changes.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse, parseAllDocuments } from "yaml"
import { hasKubectl, kubectlPath } from "../harness/apiserver/kubectlClient.ts"

type Obj = Record<string, any>

const root = resolve(import.meta.dirname, "../..")
const componentsDir = join(root, "deploy/components")
const readme = readFileSync(join(componentsDir, "README.md"), "utf8")

interface Expected {
  /** --image-credential-provider-config */
  readonly config: string
  /** --image-credential-provider-bin-dir */
  readonly binDir: string
  /** Every hostPath the component adds (mounted at the same path), with its type. */
  readonly hostPaths: Readonly<Record<string, "File" | "Directory">>
}

// The node images' own paths, from their sources (each component's comments cite them).
const expected: Readonly<Record<string, Expected>> = {
  // awslabs/amazon-eks-ami nodeadm/internal/kubelet/image-credential-provider.go
  eks: {
    config: "/etc/eks/image-credential-provider/config.json",
    binDir: "/etc/eks/image-credential-provider",
    hostPaths: { "/etc/eks/image-credential-provider": "Directory" }
  },
  // bottlerocket-os/bottlerocket-core-kit packages/kubernetes-1.31/kubelet-exec-start-conf
  "eks-bottlerocket": {
    config: "/etc/kubernetes/kubelet/credential-provider-config.yaml",
    binDir: "/usr/libexec/kubernetes/kubelet/plugins",
    hostPaths: {
      "/etc/kubernetes/kubelet/credential-provider-config.yaml": "File",
      "/usr/libexec/kubernetes/kubelet/plugins": "Directory"
    }
  },
  // GKE's gke-internal-configure-helper.sh (configure-auth-provider-gcp) and configure.sh (KUBE_BIN)
  gke: {
    config: "/etc/srv/kubernetes/cri_auth_config.yaml",
    binDir: "/home/kubernetes/bin",
    hostPaths: { "/etc/srv/kubernetes/cri_auth_config.yaml": "File", "/home/kubernetes/bin": "Directory" }
  },
  // Azure/AgentBaker parts/linux/cloud-init/artifacts/cse_config.sh and cse_install.sh
  aks: {
    config: "/var/lib/kubelet/credential-provider-config.yaml",
    binDir: "/var/lib/kubelet/credential-provider",
    hostPaths: {
      "/var/lib/kubelet/credential-provider-config.yaml": "File",
      "/var/lib/kubelet/credential-provider": "Directory",
      "/etc/kubernetes/azure.json": "File"
    }
  }
}
const names = Object.keys(expected)

// ---------------------------------------------------------------------------------------------
// Rendering

/** The README's kustomization (its first yaml block), naming the `eks` component. */
const usage = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
const usedComponent = "../preheat/deploy/components/eks"

const render = (dir: string): Array<Obj> => {
  const result = spawnSync(kubectlPath, ["kustomize", dir], { encoding: "utf8", timeout: 60_000 })
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${result.stderr || result.error?.message}`)
  return parseAllDocuments(result.stdout).map((doc) => doc.toJS() as Obj)
}

const isDaemon = (o: Obj) => o.kind === "DaemonSet" && o.metadata?.name === "preheat-daemon"
const daemonOf = (docs: ReadonlyArray<Obj>): Obj => {
  const found = docs.filter(isDaemon)
  expect(found).toHaveLength(1)
  return found[0]!
}
const podOf = (daemonSet: Obj): Obj => daemonSet.spec.template.spec
const containerOf = (daemonSet: Obj): Obj => {
  const containers = podOf(daemonSet).containers as Array<Obj>
  expect(containers.map((c) => c.name)).toEqual(["daemon"])
  return containers[0]!
}

let work: string
let base: Array<Obj>
let kubeconfig: string
const rendered = new Map<string, Array<Obj>>()

beforeAll(() => {
  if (!hasKubectl) return
  work = mkdtempSync(join(tmpdir(), "preheat-components-"))
  // The README's layout: the user's kustomization beside preheat's checkout.
  symlinkSync(root, join(work, "preheat"))
  base = render(join(root, "deploy"))
  for (const name of names) {
    const site = join(work, `site-${name}`)
    mkdirSync(site)
    writeFileSync(join(site, "kustomization.yaml"), usage.replace(usedComponent, `../preheat/deploy/components/${name}`))
    rendered.set(name, render(site))
  }
  kubeconfig = join(work, "kubeconfig")
  writeFileSync(
    kubeconfig,
    "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
      "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
  )
}, 120_000)

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------

describe("the components", () => {
  it("are the ones this test knows the node images' paths of, and eraser's (eraserComponent.test.ts)", () => {
    const dirs = readdirSync(componentsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
    expect(dirs.sort()).toEqual([...names, "eraser"].sort())
  })

  it.each(names)("%s is a kustomize Component", (name) => {
    const kustomization = parse(readFileSync(join(componentsDir, name, "kustomization.yaml"), "utf8")) as Obj
    expect(kustomization.apiVersion).toBe("kustomize.config.k8s.io/v1alpha1")
    expect(kustomization.kind).toBe("Component")
  })

  it("the README's usage is a kustomization of deploy/ with one component", () => {
    const kustomization = parse(usage) as Obj
    expect(kustomization.kind).toBe("Kustomization")
    expect(kustomization.resources).toEqual(["../preheat/deploy"])
    expect(kustomization.components).toEqual([usedComponent])
  })

  it.each(names)("%s: the README's table gives the paths the component passes", (name) => {
    const row = readme.split("\n").find((line) => line.startsWith(`| \`${name}\` |`))
    expect(row, `a row for ${name}`).toBeDefined()
    const cells = row!.split("|").map((cell) => cell.trim())
    expect(cells[3]).toContain(`\`${expected[name]!.config}\``)
    expect(cells[4]).toContain(`\`${expected[name]!.binDir}\``)
    for (const path of Object.keys(expected[name]!.hostPaths)) expect(row).toContain(`\`${path}`)
  })
})

describe.skipIf(!hasKubectl)(`rendered with ${kubectlPath} kustomize`, () => {
  it.each(names)("%s: the daemon gets the two flags after its own, with the node image's paths", (name) => {
    const { config, binDir } = expected[name]!
    const before = containerOf(daemonOf(base)).args as Array<string>
    const after = containerOf(daemonOf(rendered.get(name)!)).args as Array<string>
    expect(after).toEqual([...before, `--image-credential-provider-config=${config}`, `--image-credential-provider-bin-dir=${binDir}`])
  })

  it.each(names)("%s: the daemon takes the arguments as rendered, reading the config first", (name) => {
    // The node's files are not on this machine: the daemon parses every argument, then stops on the
    // config, before looking for a container runtime. A flag it did not know would be exit code 2.
    const [command, ...args] = containerOf(daemonOf(rendered.get(name)!)).args as Array<string>
    expect(command).toBe("daemon")
    const result = spawnSync(
      process.execPath,
      [
        "--experimental-strip-types",
        "--no-warnings",
        join(root, "src/main.ts"),
        "daemon",
        ...args,
        "--node-name",
        "n1",
        "--kubeconfig",
        kubeconfig
      ],
      { encoding: "utf8", timeout: 60_000 }
    )
    const configError = `error: --image-credential-provider-config ${expected[name]!.config}: `
    expect({ code: result.status, stderr: result.stderr.slice(0, configError.length) }).toEqual({ code: 1, stderr: configError })
  })

  it.each(names)("%s: every hostPath it adds is mounted read-only, at the same path, and holds the flags' paths", (name) => {
    const baseVolumes = new Set((podOf(daemonOf(base)).volumes as Array<Obj>).map((v) => v.name))
    const daemonSet = daemonOf(rendered.get(name)!)
    const added = (podOf(daemonSet).volumes as Array<Obj>).filter((v) => !baseVolumes.has(v.name))
    expect(Object.fromEntries(added.map((v) => [v.hostPath?.path, v.hostPath?.type]))).toEqual(expected[name]!.hostPaths)
    const mounts = containerOf(daemonSet).volumeMounts as Array<Obj>
    for (const volume of added) {
      const mountsOf = mounts.filter((m) => m.name === volume.name)
      expect(mountsOf, volume.name).toHaveLength(1)
      expect(mountsOf[0]!.readOnly, volume.name).toBe(true)
      expect(mountsOf[0]!.mountPath, volume.name).toBe(volume.hostPath.path)
      expect(mountsOf[0]!.subPath, volume.name).toBeUndefined()
    }
    const paths = added.map((v) => v.hostPath.path as string)
    const within = (file: string) => paths.some((p) => file === p || file.startsWith(`${p}/`))
    expect(within(expected[name]!.config), "the config is in a mount").toBe(true)
    expect(within(expected[name]!.binDir), "the bin dir is in a mount").toBe(true)
  })

  it.each(names)("%s: the daemon is on the host network and still resolves cluster names", (name) => {
    const pod = podOf(daemonOf(rendered.get(name)!))
    expect(pod.hostNetwork).toBe(true)
    expect(pod.dnsPolicy).toBe("ClusterFirstWithHostNet")
    expect(podOf(daemonOf(base)).hostNetwork).toBeUndefined()
  })

  it.each(names)("%s: nothing else changes", (name) => {
    const docs = rendered.get(name)!
    expect(docs.filter((o) => !isDaemon(o))).toEqual(base.filter((o) => !isDaemon(o)))

    // The DaemonSet less what the component adds is the base's.
    const daemonSet = structuredClone(daemonOf(docs))
    const baseDaemonSet = daemonOf(base)
    const basePod = podOf(baseDaemonSet)
    const pod = podOf(daemonSet)
    const baseVolumes = new Set((basePod.volumes as Array<Obj>).map((v) => v.name))
    const addedVolumes = new Set((pod.volumes as Array<Obj>).filter((v) => !baseVolumes.has(v.name)).map((v) => v.name))
    pod.volumes = (pod.volumes as Array<Obj>).filter((v) => !addedVolumes.has(v.name))
    const container = containerOf(daemonSet)
    container.volumeMounts = (container.volumeMounts as Array<Obj>).filter((m) => !addedVolumes.has(m.name))
    container.args = (container.args as Array<string>).slice(0, (containerOf(baseDaemonSet).args as Array<string>).length)
    delete pod.hostNetwork
    delete pod.dnsPolicy
    expect(daemonSet).toEqual(baseDaemonSet)
  })
})
