/**
 * deploy/ against the code: flags, ports, probes, service accounts, labels, namespaces, RBAC
 * (exactly the API calls the code makes), the kustomization, the examples (decoded with the
 * project's decoders) and the image's run settings.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Result } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { decodeAdvancedCronJob, decodeImageListPullJob, decodeImagePullJob, decodeNodeImage } from "../../src/api/decode.ts"
import type { InvalidObject } from "../../src/api/invalidObject.ts"
import { matchesLabelSelector } from "../../src/api/labelSelector.ts"
import { parseSettings } from "../../src/controller/workload/annotations.ts"
import { resources } from "../../src/kube/resources.ts"
import { defaultMetricsPort, defaultSecretNamespace } from "../../src/daemon/options.ts"
import { apiUsage, roleEntries } from "./apiUsage.ts"
import { imageVersion, runConfig } from "../../build/image.ts"
import { executablePath, nonrootUid } from "../../build/rootfs.ts"
import type { Role } from "./apiUsage.ts"
import { expectedGrants, grantsOf } from "./rbacGrants.ts"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
const deployDir = join(root, "deploy")
const examplesDir = join(deployDir, "examples")
const crdDir = join(deployDir, "crds")

// ---------------------------------------------------------------------------------------------
// Reading the manifests

type Obj = Record<string, any>

const readDocs = (file: string): Array<Obj> =>
  parseAllDocuments(readFileSync(file, "utf8"))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${relative(root, file)}: ${doc.errors.map(String).join("; ")}`)
      return doc.toJS() as Obj
    })
    .filter((doc) => doc !== null && doc !== undefined)

const yamlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()

const manifestFiles = yamlFiles(deployDir).filter((f) => f !== "kustomization.yaml")
const manifests: Array<Obj & { file: string }> = manifestFiles.flatMap((file) =>
  readDocs(join(deployDir, file)).map((doc) => ({ ...doc, file }))
)
const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind)
const one = (kind: string, name: string): Obj => {
  const found = manifests.filter((m) => m.kind === kind && m.metadata?.name === name)
  expect(found, `${kind} ${name}`).toHaveLength(1)
  return found[0]!
}

const workloads: Record<Role, Obj> = {
  controller: one("Deployment", "preheat-controller"),
  daemon: one("DaemonSet", "preheat-daemon")
}
const containerOf = (role: Role): Obj => {
  const containers = workloads[role].spec.template.spec.containers as Array<Obj>
  expect(containers).toHaveLength(1)
  return containers[0]!
}

/** `[role, --a=1, --b, 2]` -> role and a map of flag values. */
const parseArgs = (args: ReadonlyArray<string>) => {
  const [command, ...rest] = args
  const flags = new Map<string, string>()
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    expect(arg.startsWith("--"), `argument ${arg} is a --flag`).toBe(true)
    const eq = arg.indexOf("=")
    if (eq >= 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1))
    else flags.set(arg.slice(2), rest[++i] ?? "")
  }
  return { command, flags }
}
const argsOf = (role: Role) => parseArgs(containerOf(role).args as Array<string>)

// ---------------------------------------------------------------------------------------------
// The commands' flags, from `preheat ROLE --help` run on the Node that runs vitest

interface FlagInfo {
  readonly type: string
  readonly fallback: string | undefined
}

const helpOf = (role: Role): Map<string, FlagInfo> => {
  const result = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", join(root, "src/main.ts"), role, "--help"], {
    encoding: "utf8",
    cwd: root,
    env: { ...process.env, NO_COLOR: "1" }
  })
  expect(result.status, result.stderr).toBe(0)
  const flags = new Map<string, FlagInfo>()
  const section = result.stdout.split(/^GLOBAL FLAGS$/m)[0]!.split(/^FLAGS$/m)[1] ?? ""
  for (const line of section.split("\n")) {
    const match = /^\s+--([a-z][a-z0-9-]*)\s+(\S+)\s+(.*)$/.exec(line)
    if (match === null) continue
    const fallback = /\(default ([^)]+)\)/.exec(match[3]!)?.[1]
    flags.set(match[1]!, { type: match[2]!, fallback })
  }
  return flags
}

const help: Partial<Record<Role, Map<string, FlagInfo>>> = {}
beforeAll(() => {
  help.controller = helpOf("controller")
  help.daemon = helpOf("daemon")
}, 60_000)

/** Flag value in the manifest, else the command's default. */
const defaults: Record<Role, Record<string, string>> = {
  controller: {
    "metrics-port": "8080",
    "secret-namespace": defaultSecretNamespace,
    "leader-election-namespace": "preheat-system",
    "leader-election-name": "preheat-controller"
  },
  daemon: {
    "metrics-port": String(defaultMetricsPort),
    "secret-namespace": defaultSecretNamespace,
    "host-run-dir": "/var/run",
    "host-root": "/"
  }
}
const flagValue = (role: Role, flag: string): string => {
  const given = argsOf(role).flags.get(flag)
  if (given !== undefined) return given
  const fallback = defaults[role][flag]
  expect(fallback, `default of --${flag}`).toBeDefined()
  return fallback!
}

const roles: ReadonlyArray<Role> = ["controller", "daemon"]

// ---------------------------------------------------------------------------------------------

describe("workloads", () => {
  it.each(roles)("%s: the command and every arg are ones `preheat` accepts", (role) => {
    const { command, flags } = argsOf(role)
    expect(command).toBe(role)
    const accepted = help[role]!
    expect(accepted.size).toBeGreaterThan(5)
    for (const [flag, value] of flags) {
      expect(accepted.has(flag), `--${flag} is a flag of preheat ${role}`).toBe(true)
      if (accepted.get(flag)!.type === "integer") expect(value, `--${flag}`).toMatch(/^\d+$/)
      if (flag === "log-format") expect(["json", "text"]).toContain(value)
    }
  })

  it("the defaults this test assumes are the commands' own", () => {
    expect(help.controller!.get("metrics-port")!.fallback).toBe(defaults.controller["metrics-port"])
    expect(help.daemon!.get("metrics-port")!.fallback).toBe(defaults.daemon["metrics-port"])
    const source = readFileSync(join(root, "src/cli/controllerCommand.ts"), "utf8")
    expect(source).toContain(`Flag.withDefault("${defaults.controller["leader-election-namespace"]}")`)
    expect(source).toContain(`Flag.withDefault("${defaults.controller["leader-election-name"]}")`)
    // The daemon's flags are the CRI daemon's own and those it shares with the simulated daemon.
    const daemonSource = ["daemonCommand.ts", "daemonFlags.ts"].map((file) => readFileSync(join(root, "src/cli", file), "utf8")).join("\n")
    expect(daemonSource).toContain(`Flag.withDefault("${defaults.daemon["host-run-dir"]}")`)
    expect(daemonSource).toContain(`Flag.withDefault("${defaults.daemon["host-root"]}")`)
  })

  it.each(roles)("%s: the metrics port is the code's (default or arg), named, and probed", (role) => {
    const container = containerOf(role)
    const port = Number(flagValue(role, "metrics-port"))
    expect(port).toBe(Number(defaults[role]["metrics-port"]))
    expect(container.ports).toEqual([{ name: "metrics", containerPort: port, protocol: "TCP" }])
    const probePort = (probe: Obj) => (probe.httpGet.port === "metrics" ? port : probe.httpGet.port)
    expect(container.livenessProbe.httpGet.path).toBe("/healthz")
    expect(probePort(container.livenessProbe)).toBe(port)
    expect(container.readinessProbe.httpGet.path).toBe("/readyz")
    expect(probePort(container.readinessProbe)).toBe(port)
    if (container.startupProbe !== undefined) expect(probePort(container.startupProbe)).toBe(port)
    // Listening on all interfaces, else the kubelet's probes cannot reach it.
    expect(flagValue(role, "metrics-host") ?? "0.0.0.0").toBe("0.0.0.0")
  })

  it.each(roles)("%s: selector matches the pod labels, and the other role's pods do not", (role) => {
    const workload = workloads[role]
    const selector = workload.spec.selector.matchLabels as Record<string, string>
    const labels = workload.spec.template.metadata.labels as Record<string, string>
    expect(Object.keys(selector).length).toBeGreaterThan(0)
    for (const [k, v] of Object.entries(selector)) expect(labels[k], k).toBe(v)
    const other = workloads[role === "controller" ? "daemon" : "controller"].spec.template.metadata.labels
    expect(Object.entries(selector).every(([k, v]) => other[k] === v)).toBe(false)
    expect(workload.metadata.namespace).toBe("preheat-system")
  })

  it("PodDisruptionBudget, Service and anti-affinity select the controller pods", () => {
    const labels = workloads.controller.spec.template.metadata.labels
    const selectors = [
      ...ofKind("PodDisruptionBudget").map((p) => p.spec.selector.matchLabels),
      ...ofKind("Service").map((s) => s.spec.selector),
      ...workloads.controller.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.map(
        (t: Obj) => t.podAffinityTerm.labelSelector.matchLabels
      )
    ]
    expect(selectors.length).toBeGreaterThanOrEqual(3)
    for (const selector of selectors) {
      for (const [k, v] of Object.entries(selector)) expect(labels[k], k).toBe(v)
    }
    for (const service of ofKind("Service")) {
      expect(service.spec.ports[0].port).toBe(Number(flagValue("controller", "metrics-port")))
      expect(service.spec.ports[0].targetPort).toBe("metrics")
    }
  })

  it.each(roles)("%s: its service account exists in its namespace and is bound", (role) => {
    const workload = workloads[role]
    const name = workload.spec.template.spec.serviceAccountName
    expect(name).toBe(`preheat-${role}`)
    expect(one("ServiceAccount", name).metadata.namespace).toBe(workload.metadata.namespace)
    const bound = [...ofKind("ClusterRoleBinding"), ...ofKind("RoleBinding")].filter((b) =>
      (b.subjects as Array<Obj>).some((s) => s.kind === "ServiceAccount" && s.name === name && s.namespace === workload.metadata.namespace)
    )
    expect(bound.length).toBeGreaterThan(0)
  })

  it("every ServiceAccount is used by a workload", () => {
    const used = new Set(roles.map((r) => workloads[r].spec.template.spec.serviceAccountName))
    for (const sa of ofKind("ServiceAccount")) expect(used.has(sa.metadata.name), sa.metadata.name).toBe(true)
  })

  it("namespaces: the workloads', the lease's and the secrets' exist in namespace.yaml", () => {
    const namespaces = new Set(ofKind("Namespace").map((n) => n.metadata.name))
    expect(namespaces).toEqual(new Set(["preheat-system", "preheat-daemon-config"]))
    expect(flagValue("controller", "secret-namespace")).toBe(flagValue("daemon", "secret-namespace"))
    expect(namespaces.has(flagValue("controller", "secret-namespace"))).toBe(true)
    expect(namespaces.has(flagValue("controller", "leader-election-namespace"))).toBe(true)
    for (const m of manifests) if (m.metadata?.namespace !== undefined) expect(namespaces.has(m.metadata.namespace), m.file).toBe(true)
  })

  it("controller: 2 replicas, POD_NAME from the downward API, locked down", () => {
    const workload = workloads.controller
    expect(workload.spec.replicas).toBe(2)
    const env = containerOf("controller").env as Array<Obj>
    expect(env.find((e) => e.name === "POD_NAME")?.valueFrom).toEqual({ fieldRef: { fieldPath: "metadata.name" } })
    const pod = workload.spec.template.spec.securityContext
    expect(pod.runAsNonRoot).toBe(true)
    expect(pod.runAsUser).toBeGreaterThan(0)
    expect(pod.seccompProfile).toEqual({ type: "RuntimeDefault" })
    const pdb = ofKind("PodDisruptionBudget")
    expect(pdb).toHaveLength(1)
    expect(pdb[0]!.spec.minAvailable).toBeLessThan(workload.spec.replicas)
  })

  it("daemon: NODE_NAME from spec.nodeName, host /var/run read-only at --host-run-dir, containerd's image store and the kubelet's configuration read-only under --host-root, all taints, priority class, rolling update", () => {
    const workload = workloads.daemon
    const pod = workload.spec.template.spec
    const container = containerOf("daemon")
    expect((container.env as Array<Obj>).find((e) => e.name === "NODE_NAME")?.valueFrom).toEqual({
      fieldRef: { fieldPath: "spec.nodeName" }
    })
    expect(argsOf("daemon").flags.has("node-name")).toBe(false)
    const hostRunDir = flagValue("daemon", "host-run-dir")
    expect(hostRunDir).toBe("/host/var/run")
    const mount = (container.volumeMounts as Array<Obj>).find((m) => m.mountPath === hostRunDir)
    expect(mount?.readOnly).toBe(true)
    const volume = (pod.volumes as Array<Obj>).find((v) => v.name === mount!.name)
    expect(volume?.hostPath?.path).toBe("/var/run")
    // The image store, for statfs of the image filesystem (--min-free-disk) at the node's path under --host-root.
    const hostRoot = flagValue("daemon", "host-root")
    expect(hostRoot).toBe("/host")
    const store = (container.volumeMounts as Array<Obj>).find((m) => m.mountPath === `${hostRoot}/var/lib/containerd`)
    expect(store?.readOnly).toBe(true)
    expect((pod.volumes as Array<Obj>).find((v) => v.name === store!.name)?.hostPath?.path).toBe("/var/lib/containerd")
    // The kubelet's configuration file (KEP-2535's policy), read-only where --kubelet-config names it under --host-root.
    const kubeletConfig = flagValue("daemon", "kubelet-config")
    const config = (container.volumeMounts as Array<Obj>).find((m) => m.mountPath === `${hostRoot}${kubeletConfig}`)
    expect(config?.readOnly).toBe(true)
    expect((pod.volumes as Array<Obj>).find((v) => v.name === config!.name)?.hostPath).toEqual({
      path: kubeletConfig,
      type: "FileOrCreate"
    })
    // No other hostPath: the daemon sees nothing of the host but the run dir, the image store and the kubelet's configuration.
    expect((pod.volumes as Array<Obj>).filter((v) => v.hostPath !== undefined)).toHaveLength(3)
    expect(pod.tolerations).toEqual([{ operator: "Exists" }])
    expect(one("PriorityClass", pod.priorityClassName).value).toBeGreaterThan(0)
    expect(workload.spec.updateStrategy.type).toBe("RollingUpdate")
    expect(workload.spec.updateStrategy.rollingUpdate.maxUnavailable).toBeDefined()
    expect(pod.hostNetwork ?? false).toBe(false)
    expect(pod.hostPID ?? false).toBe(false)
  })

  it.each(roles)("%s: resources and container security context", (role) => {
    const container = containerOf(role)
    for (const kind of ["requests", "limits"]) {
      expect(container.resources[kind].cpu, `${kind}.cpu`).toBeDefined()
      expect(container.resources[kind].memory, `${kind}.memory`).toBeDefined()
    }
    const security = container.securityContext
    expect(security.allowPrivilegeEscalation).toBe(false)
    expect(security.readOnlyRootFilesystem).toBe(true)
    expect(security.privileged).toBe(false)
    expect(security.capabilities).toEqual({ drop: ["ALL"] })
    expect(security.seccompProfile).toEqual({ type: "RuntimeDefault" })
  })

  it.each(roles)("%s: the image is the kustomization's, tagged with the package version", (role) => {
    const kustomization = readDocs(join(deployDir, "kustomization.yaml"))[0]!
    const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version
    const [name, tag] = (containerOf(role).image as string).split(":")
    expect(kustomization.images.map((i: Obj) => i.name)).toContain(name)
    expect(tag).toBe(version)
    expect(kustomization.images.find((i: Obj) => i.name === name).newTag).toBe(version)
  })
})

// ---------------------------------------------------------------------------------------------
// RBAC: the code's API calls (scanned) = apiUsage.ts = what rbac.yaml grants

const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"] as const

/** The source files a role runs: the closure of non-type relative imports from its entry. */
const closure = (entry: string): Map<string, string> => {
  const files = new Map<string, string>()
  const visit = (file: string) => {
    if (files.has(file) || !file.endsWith(".ts") || !existsSync(file)) return
    const text = readFileSync(file, "utf8")
    files.set(file, text)
    const importRe = /^(?:import|export)\s+(?!type\b)(?:[^;"']*?\sfrom\s+)?["'](\.[^"']+)["']/gm
    for (const match of text.matchAll(importRe)) visit(resolve(dirname(file), match[1]!))
  }
  visit(join(root, entry))
  return files
}

/** The text of the call's arguments starting at `open` (an opening parenthesis). */
const callArgs = (text: string, open: number): Array<string> => {
  const args: Array<string> = []
  let depth = 0
  let start = open + 1
  let quote: string | undefined
  for (let i = open; i < text.length; i++) {
    const c = text[i]!
    if (quote !== undefined) {
      if (c === "\\") i++
      else if (c === quote) quote = undefined
      continue
    }
    if (c === '"' || c === "'" || c === "`") quote = c
    else if (c === "(" || c === "[" || c === "{") depth++
    else if (c === ")" || c === "]" || c === "}") {
      depth--
      if (depth === 0) {
        args.push(text.slice(start, i).trim())
        return args.filter((a) => a !== "")
      }
    } else if (c === "," && depth === 1) {
      args.push(text.slice(start, i).trim())
      start = i + 1
    }
  }
  throw new Error("unbalanced call")
}

interface Found {
  readonly role: Role
  readonly verb: string
  readonly kind: string
  readonly subresource?: string
}
const key = (f: { role: string; verb: string; kind: string; subresource?: string | undefined }) =>
  `${f.role} ${f.verb} ${f.kind}${f.subresource === undefined ? "" : `/${f.subresource}`}`

/**
 * Helpers that take a Resource and call the API on the caller's behalf: a call site
 * `helper(resources.X, ...)` counts as these calls on X. The scan fails on any other call whose
 * resource is not a literal `resources.X`, so a new helper cannot slip past.
 */
const helpers: Record<string, { readonly file: string; readonly calls: ReadonlyArray<{ verb: string; subresource?: string }> }> = {
  watcher: { file: "src/kube/watcher.ts", calls: [{ verb: "list" }, { verb: "watch" }] },
  patchStatus: { file: "src/controller/writes.ts", calls: [{ verb: "patch", subresource: "status" }] },
  reportInvalid: { file: "src/controller/writes.ts", calls: [{ verb: "patch", subresource: "status" }] },
  deleteExact: { file: "src/kube/deleteExact.ts", calls: [{ verb: "delete" }] }
}

const scan = (role: Role): { found: Array<Found>; files: Map<string, string> } => {
  const files = closure(roleEntries[role])
  const found: Array<Found> = []
  for (const [file, text] of files) {
    const rel = relative(root, file)
    for (const match of text.matchAll(/\bapi\s*\.(get|list|watch|create|update|patch|delete)\(/g)) {
      const args = callArgs(text, match.index! + match[0].length - 1)
      const subresource = args.length > 0 && /^["']status["']$/.test(args[args.length - 1]!) ? "status" : undefined
      const literal = /^resources\.(\w+)$/.exec(args[0] ?? "")
      if (literal !== null) {
        found.push({ role, verb: match[1]!, kind: literal[1]!, ...(subresource === undefined ? {} : { subresource }) })
        continue
      }
      // A generic call: only inside a known helper, with the verbs the helper declares.
      const helper = Object.values(helpers).find(
        (h) => h.file === rel && h.calls.some((c) => c.verb === match[1] && c.subresource === subresource)
      )
      expect(helper, `${rel}: api.${match[1]}(${args[0]}, ...) is not on a literal resources.X nor in a known helper`).toBeDefined()
    }
    for (const [name, helper] of Object.entries(helpers)) {
      for (const match of text.matchAll(new RegExp(`\\b${name}\\(`, "g"))) {
        const before = text.slice(Math.max(0, match.index! - 30), match.index!)
        if (/(const|function|export)\s*$/.test(before) || /\bconst\s+$/.test(before)) continue
        const args = callArgs(text, match.index! + match[0].length - 1)
        const literal = /^resources\.(\w+)$/.exec(args[0] ?? "")
        if (literal === null && rel === helper.file) continue
        expect(literal, `${rel}: ${name}(${args[0]}, ...) must name resources.X`).not.toBeNull()
        for (const call of helper.calls) found.push({ role, kind: literal![1]!, ...call })
      }
    }
  }
  return { found, files }
}

/** What the base manifests grant, and what apiUsage.ts asks of them: every use but a component's (eraserComponent.test.ts). */
const grantedByRbac = (): Set<string> =>
  grantsOf(
    manifests,
    new Map<string, Role>(roles.map((r) => [`${workloads[r].metadata.namespace}/${workloads[r].spec.template.spec.serviceAccountName}`, r]))
  )
const baseUses = apiUsage.filter((use) => use.component === undefined)

describe("RBAC", () => {
  it.each(roles)("%s: the code's KubeApi calls are exactly those in apiUsage.ts", (role) => {
    const { found, files } = scan(role)
    expect(found.length).toBeGreaterThan(0)
    for (const f of found) expect(Object.keys(resources), `resources.${f.kind}`).toContain(f.kind)
    const listed = apiUsage.filter((u) => u.role === role)
    const explicit = listed.filter((u) => u.implicitBecause === undefined)
    expect([...new Set(found.map(key))].sort()).toEqual([...new Set(explicit.map(key))].sort())
    const all = [...files.values()].join("\n")
    for (const use of listed.filter((u) => u.implicitBecause !== undefined)) {
      expect(all, `${key(use)} is needed because of "${use.implicitBecause}"`).toContain(use.implicitBecause)
    }
  })

  it("the daemon never touches a Secret outside its config namespace (SPEC §2)", () => {
    const daemonSecrets = apiUsage.filter((u) => u.role === "daemon" && u.kind === "secret")
    expect(daemonSecrets.map((u) => [u.verb, u.scope])).toEqual([["get", { namespaceFlag: "secret-namespace" }]])
    // The Role that lets it read them lives exactly in the namespace its --secret-namespace names.
    const readers = ofKind("Role").filter((r) => (r.rules as Array<Obj>).some((rule) => rule.resources.includes("secrets")))
    for (const role of readers) expect(role.metadata.namespace).toBe(flagValue("daemon", "secret-namespace"))
  })

  it("rbac.yaml grants exactly apiUsage.ts: no wildcard, nothing extra, nothing missing", () => {
    const granted = [...grantedByRbac()].sort()
    const expected = [...expectedGrants(baseUses, flagValue)].sort()
    expect(granted).toEqual(expected)
    for (const verb of new Set(apiUsage.map((u) => u.verb))) expect(verbs).toContain(verb)
  })

  it("the granted custom resources and subresources exist in the CRDs", () => {
    const crds = yamlFiles(crdDir).flatMap((f) => readDocs(join(crdDir, f)))
    for (const role of [...ofKind("ClusterRole"), ...ofKind("Role")]) {
      for (const rule of role.rules as Array<Obj>) {
        if (!rule.apiGroups.includes("apps.kruise.io")) continue
        for (const resource of rule.resources as Array<string>) {
          const [plural, sub] = resource.split("/")
          const crd = crds.find((c) => c.spec.group === "apps.kruise.io" && c.spec.names.plural === plural)
          expect(crd, plural).toBeDefined()
          if (sub === "status") expect(crd!.spec.versions[0].subresources?.status).toBeDefined()
        }
      }
    }
  })
})

// ---------------------------------------------------------------------------------------------

describe("kustomization", () => {
  const kustomization = readDocs(join(deployDir, "kustomization.yaml"))[0]!
  const listed = kustomization.resources as Array<string>

  it("lists every CRD file and every manifest, and only files that exist", () => {
    for (const crd of yamlFiles(crdDir)) expect(listed).toContain(`crds/${crd}`)
    for (const file of manifestFiles) expect(listed).toContain(file)
    for (const entry of listed) expect(existsSync(join(deployDir, entry)), entry).toBe(true)
    expect(new Set(listed).size).toBe(listed.length)
  })

  it("sets no single namespace (the manifests use two) and does not relabel selectors", () => {
    expect(kustomization.namespace).toBeUndefined()
    expect(kustomization.commonLabels).toBeUndefined()
    for (const label of kustomization.labels ?? []) expect(label.includeSelectors).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------------

describe("examples", () => {
  const files = yamlFiles(examplesDir)
  const docs = files.flatMap((file) => readDocs(join(examplesDir, file)).map((doc) => ({ file, doc })))

  it.each(files)("%s decodes with the project's decoders", (file) => {
    const inFile = docs.filter((d) => d.file === file)
    expect(inFile.length).toBeGreaterThan(0)
    for (const { doc } of inFile) {
      if (doc.kind === "Deployment") {
        // Workload-driven pre-pull: the annotations parse, and the selector matches the template.
        expect(doc.apiVersion, file).toBe("apps/v1")
        expect(parseSettings(doc.metadata.annotations)._tag, file).toBe("On")
        expect(matchesLabelSelector(doc.spec.selector, doc.spec.template.metadata.labels), file).toBe(true)
        continue
      }
      // The cron job as v1beta1: upstream has imageListPullJobTemplate there only (issue 26).
      expect(doc.apiVersion, file).toBe(
        doc.kind === "Secret" ? "v1" : doc.kind === "AdvancedCronJob" ? "apps.kruise.io/v1beta1" : "apps.kruise.io/v1alpha1"
      )
      if (doc.kind === "ImagePullJob" || doc.kind === "ImageListPullJob" || doc.kind === "AdvancedCronJob") {
        const decode: (input: unknown) => Result.Result<unknown, InvalidObject> =
          doc.kind === "ImagePullJob"
            ? decodeImagePullJob
            : doc.kind === "ImageListPullJob"
              ? decodeImageListPullJob
              : decodeAdvancedCronJob
        const failure = Result.match(decode(doc), { onSuccess: () => undefined, onFailure: (e) => e })
        if (failure !== undefined) throw new Error(`${file}: ${JSON.stringify(failure)}`)
        continue
      }
      expect(doc.kind, file).toBe("Secret")
      expect(doc.type).toBe("kubernetes.io/dockerconfigjson")
      const config = JSON.parse(Buffer.from(doc.data[".dockerconfigjson"], "base64").toString("utf8"))
      expect(Object.keys(config.auths).length).toBeGreaterThan(0)
      expect(readFileSync(join(examplesDir, file), "utf8")).toMatch(/FAKE CREDENTIALS/)
      // A job in the same file uses it.
      expect(inFile.some((d) => (d.doc.spec?.pullSecrets ?? []).includes(doc.metadata.name))).toBe(true)
    }
  })

  it("cover an Always job, a Never job, an ImageListPullJob, a podSelector job, a secret-backed job and a cron job", () => {
    const jobs = docs.map((d) => d.doc).filter((d) => d.kind === "ImagePullJob")
    expect(jobs.some((j) => j.metadata.name === "job-with-always" && j.spec.completionPolicy?.type === "Always")).toBe(true)
    expect(jobs.find((j) => j.metadata.name === "job-with-always")!.spec.selector?.names).toBeUndefined()
    expect(jobs.some((j) => j.spec.completionPolicy?.type === "Never")).toBe(true)
    expect(jobs.some((j) => j.spec.podSelector !== undefined)).toBe(true)
    expect(jobs.some((j) => (j.spec.pullSecrets ?? []).length > 0)).toBe(true)
    expect(docs.some((d) => d.doc.kind === "ImageListPullJob")).toBe(true)
    expect(docs.some((d) => d.doc.kind === "Deployment")).toBe(true)
    expect(docs.some((d) => d.doc.kind === "AdvancedCronJob" && d.doc.spec.template.imageListPullJobTemplate !== undefined)).toBe(true)
    expect(new Set(docs.map((d) => `${d.doc.kind}/${d.doc.metadata.name}`)).size).toBe(docs.length)
  })

  it("the README's NodeImage merge patch gives a NodeImage that decodes", () => {
    const readme = readFileSync(join(examplesDir, "README.md"), "utf8")
    const patch = /kubectl patch nodeimage \S+ --type=merge -p '([^']+)'/.exec(readme)
    expect(patch).not.toBeNull()
    const body = JSON.parse(patch![1]!)
    const decoded = decodeNodeImage({ apiVersion: "apps.kruise.io/v1alpha1", kind: "NodeImage", metadata: { name: "node-xxx" }, ...body })
    if (Result.isFailure(decoded)) throw new Error(JSON.stringify(decoded.failure))
  })
})

// ---------------------------------------------------------------------------------------------

describe("the image (npm run build:image, build/image.ts)", () => {
  it("runs as the controller's non-root user unless a manifest says otherwise", () => {
    const pod = workloads.controller.spec.template.spec.securityContext
    expect(runConfig.User).toBe(`${pod.runAsUser}:${pod.runAsGroup}`)
    expect(pod.runAsUser).toBe(nonrootUid)
  })

  it("has the entrypoint the manifests' args follow, and exposes their ports", () => {
    expect(runConfig.Entrypoint).toEqual([executablePath])
    for (const role of roles) {
      // The manifests give the role as the first arg, not a command of their own.
      expect(containerOf(role).command).toBeUndefined()
      for (const port of containerOf(role).ports as Array<Obj>) {
        expect(Object.keys(runConfig.ExposedPorts)).toContain(`${port.containerPort}/${port.protocol.toLowerCase()}`)
      }
    }
  })

  it("is tagged with the package version, as the kustomization's image", () => {
    const kustomization = readDocs(join(deployDir, "kustomization.yaml"))[0]!
    expect(kustomization.images.find((i: Obj) => i.name === "preheat").newTag).toBe(imageVersion)
  })
})
