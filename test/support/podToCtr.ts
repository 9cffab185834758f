/**
 * A pod template's single container as `ctr run` flags, the way the kubelet would run it: the
 * image's entrypoint with the container's args, its env (fieldRef spec.nodeName filled in), the
 * pod's user, the container's security context, and its volume mounts with each volume's source
 * given by the test (a hostPath becomes a test directory, an emptyDir a fresh one). Anything in
 * the manifest this translation does not know is an error, so the manifest cannot grow a setting
 * that the image test silently leaves out.
 *
 * containerd 1.6's ctr has no --user and no --cap-drop ALL: those two go into the OCI runtime spec
 * that `ctr container create` made from the flags (`specWithPod`), which then runs with
 * `ctr run --config`, as the CRI plugin would have written it.
 */

type Obj = Record<string, any>

export class PodTranslationError extends Error {}

export interface CtrRunInput {
  /** The pod template's spec (DaemonSet/Deployment .spec.template.spec). */
  readonly podSpec: Obj
  /** The image's config Entrypoint (Kubernetes `args` keep it). */
  readonly entrypoint: ReadonlyArray<string>
  /** Host directory for each volume, by volume name. */
  readonly volumeSources: Readonly<Record<string, string>>
  readonly nodeName: string
  /** Replaces `--flag=value` arguments of the manifest (e.g. a free metrics port). */
  readonly argOverrides?: Readonly<Record<string, string>>
  /** Appended to the args (e.g. --kubeconfig, which a pod gets from its service account instead). */
  readonly extraArgs?: ReadonlyArray<string>
  readonly extraMounts?: ReadonlyArray<{ readonly source: string; readonly destination: string }>
}

export interface CtrRun {
  /** Flags for `ctr run` / `ctr container create` before IMAGE and ID. */
  readonly flags: ReadonlyArray<string>
  /** The process: entrypoint plus args. */
  readonly command: ReadonlyArray<string>
  /** runAsUser/runAsGroup, when the manifest sets them (else the image's user). */
  readonly user: { readonly uid: number; readonly gid: number } | undefined
  /** Capabilities dropped from every set: "ALL" or names with CAP_. */
  readonly dropCapabilities: "ALL" | ReadonlyArray<string>
  readonly addCapabilities: ReadonlyArray<string>
}

const known = (what: string, value: Obj | undefined, keys: ReadonlyArray<string>): void => {
  for (const key of Object.keys(value ?? {})) {
    if (!keys.includes(key)) throw new PodTranslationError(`${what}.${key} is not translated to ctr run`)
  }
}

const envFlags = (env: ReadonlyArray<Obj>, nodeName: string): Array<string> =>
  env.flatMap((variable) => {
    if (typeof variable.value === "string") return ["--env", `${variable.name}=${variable.value}`]
    const path = variable.valueFrom?.fieldRef?.fieldPath
    if (path === "spec.nodeName") return ["--env", `${variable.name}=${nodeName}`]
    throw new PodTranslationError(`env ${variable.name}: only values and fieldRef spec.nodeName are translated`)
  })

interface Security {
  readonly flags: Array<string>
  readonly user: CtrRun["user"]
  readonly drop: CtrRun["dropCapabilities"]
  readonly add: Array<string>
}

const securityFlags = (pod: Obj, container: Obj): Security => {
  known("pod securityContext", pod, ["runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile"])
  known("container securityContext", container, [
    "allowPrivilegeEscalation",
    "readOnlyRootFilesystem",
    "runAsNonRoot",
    "privileged",
    "capabilities",
    "seccompProfile"
  ])
  const merged = { ...pod, ...container }
  const flags: Array<string> = []
  const user = merged.runAsUser === undefined ? undefined : { uid: merged.runAsUser, gid: merged.runAsGroup ?? merged.runAsUser }
  if (merged.runAsNonRoot === true && (merged.runAsUser ?? 1) === 0) throw new PodTranslationError("runAsNonRoot with runAsUser 0")
  if (merged.readOnlyRootFilesystem === true) flags.push("--read-only")
  if (merged.privileged === true) flags.push("--privileged")
  // ctr sets NoNewPrivileges unless --allow-new-privs: Kubernetes' allowPrivilegeEscalation: false.
  if (merged.allowPrivilegeEscalation !== false) flags.push("--allow-new-privs")
  if (merged.seccompProfile !== undefined) {
    if (merged.seccompProfile.type !== "RuntimeDefault") throw new PodTranslationError(`seccompProfile ${merged.seccompProfile.type}`)
    flags.push("--seccomp")
  }
  const caps = (container.capabilities ?? {}) as Obj
  known("capabilities", caps, ["drop", "add"])
  const dropped = (caps.drop ?? []) as Array<string>
  const drop = dropped.includes("ALL") ? "ALL" : dropped.map((cap) => `CAP_${cap}`)
  return { flags, user, drop, add: ((caps.add ?? []) as Array<string>).map((cap) => `CAP_${cap}`) }
}

const mountFlags = (pod: Obj, container: Obj, sources: Readonly<Record<string, string>>): Array<string> => {
  const volumes = new Map<string, Obj>(((pod.volumes ?? []) as Array<Obj>).map((v) => [v.name, v]))
  return ((container.volumeMounts ?? []) as Array<Obj>).flatMap((mount) => {
    known(`volumeMount ${mount.name}`, mount, ["name", "mountPath", "readOnly"])
    const volume = volumes.get(mount.name)
    if (volume === undefined) throw new PodTranslationError(`volumeMount ${mount.name} names no volume`)
    if (volume.hostPath === undefined && volume.emptyDir === undefined) {
      throw new PodTranslationError(`volume ${mount.name}: only hostPath and emptyDir are translated`)
    }
    const source = sources[mount.name]
    if (source === undefined) throw new PodTranslationError(`no test directory for volume ${mount.name}`)
    return ["--mount", `type=bind,src=${source},dst=${mount.mountPath},options=rbind:${mount.readOnly === true ? "ro" : "rw"}`]
  })
}

/**
 * Settings that shape the process: translated above. Settings for the kubelet, the scheduler or
 * the API server (placement, probes, ports, resources, the image reference): checked by the image
 * test on their own or with no effect on how the container runs. Anything else (hostNetwork,
 * hostPID, envFrom, workingDir, ...) would change the process and must be translated first.
 */
const podKeys = [
  "containers",
  "volumes",
  "securityContext",
  "automountServiceAccountToken",
  "serviceAccountName",
  "nodeSelector",
  "tolerations",
  "affinity",
  "priorityClassName",
  "terminationGracePeriodSeconds"
]
const containerKeys = [
  "name",
  "image",
  "imagePullPolicy",
  "args",
  "env",
  "securityContext",
  "volumeMounts",
  "ports",
  "livenessProbe",
  "readinessProbe",
  "startupProbe",
  "resources"
]

export const ctrRunFor = (input: CtrRunInput): CtrRun => {
  known("pod spec", input.podSpec, podKeys)
  const containers = (input.podSpec.containers ?? []) as Array<Obj>
  if (containers.length !== 1) throw new PodTranslationError(`expected one container, found ${containers.length}`)
  const container = containers[0]!
  known("container", container, containerKeys)
  const args = ((container.args ?? []) as Array<string>).map((arg) => {
    const eq = arg.indexOf("=")
    const override = eq > 0 ? input.argOverrides?.[arg.slice(0, eq)] : undefined
    return override === undefined ? arg : `${arg.slice(0, eq)}=${override}`
  })
  const security = securityFlags(input.podSpec.securityContext ?? {}, container.securityContext ?? {})
  return {
    user: security.user,
    dropCapabilities: security.drop,
    addCapabilities: security.add,
    flags: [
      ...envFlags((container.env ?? []) as Array<Obj>, input.nodeName),
      ...security.flags,
      ...mountFlags(input.podSpec, container, input.volumeSources),
      ...(input.extraMounts ?? []).flatMap((m) => ["--mount", `type=bind,src=${m.source},dst=${m.destination},options=rbind:ro`])
    ],
    command: [...input.entrypoint, ...args, ...(input.extraArgs ?? [])]
  }
}

const capabilitySets = ["bounding", "effective", "permitted", "inheritable", "ambient"] as const

/**
 * The OCI runtime spec `ctr container create` wrote for `run`'s flags, with the pod's user and
 * capabilities applied and the root file system at `rootPath` (the container's snapshot, mounted).
 */
export const specWithPod = (spec: Obj, run: CtrRun, rootPath: string): Obj => {
  const process = { ...spec.process }
  if (run.user !== undefined) process.user = { uid: run.user.uid, gid: run.user.gid }
  const capabilities: Record<string, Array<string>> = {}
  for (const set of capabilitySets) {
    const current = (process.capabilities?.[set] ?? []) as Array<string>
    const kept = run.dropCapabilities === "ALL" ? [] : current.filter((cap) => !run.dropCapabilities.includes(cap))
    capabilities[set] = [...new Set([...kept, ...(set === "ambient" || set === "inheritable" ? [] : run.addCapabilities)])]
  }
  process.capabilities = capabilities
  return { ...spec, process, root: { ...spec.root, path: rootPath } }
}
