import { describe, expect, it } from "vitest"
import { ctrRunFor, PodTranslationError, specWithPod } from "../support/podToCtr.ts"

const podSpec = {
  securityContext: { runAsNonRoot: false, runAsUser: 0, runAsGroup: 0, seccompProfile: { type: "RuntimeDefault" } },
  containers: [
    {
      name: "daemon",
      args: ["daemon", "--metrics-port=10221", "--log-format=json"],
      env: [
        { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
        { name: "A", value: "b" }
      ],
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
      volumeMounts: [
        { name: "run", mountPath: "/host/var/run", readOnly: true },
        { name: "tmp", mountPath: "/tmp" }
      ]
    }
  ],
  volumes: [
    { name: "run", hostPath: { path: "/var/run" } },
    { name: "tmp", emptyDir: {} }
  ]
}
const input = { podSpec, entrypoint: ["/bin/preheat"], volumeSources: { run: "/t/run", tmp: "/t/tmp" }, nodeName: "n1" }

describe("a pod's container as ctr run", () => {
  it("translates args, env, user, security context and mounts", () => {
    const run = ctrRunFor({ ...input, argOverrides: { "--metrics-port": "1234" }, extraArgs: ["--kubeconfig=/k"] })
    expect(run.command).toEqual(["/bin/preheat", "daemon", "--metrics-port=1234", "--log-format=json", "--kubeconfig=/k"])
    expect(run.flags).toEqual([
      "--env",
      "NODE_NAME=n1",
      "--env",
      "A=b",
      "--read-only",
      "--seccomp",
      "--mount",
      "type=bind,src=/t/run,dst=/host/var/run,options=rbind:ro",
      "--mount",
      "type=bind,src=/t/tmp,dst=/tmp,options=rbind:rw"
    ])
    expect(run.user).toEqual({ uid: 0, gid: 0 })
    const spec = specWithPod(
      {
        process: { user: { uid: 65532, gid: 65532 }, capabilities: { bounding: ["CAP_KILL"], effective: ["CAP_KILL"] } },
        root: { path: "rootfs", readonly: true }
      },
      run,
      "/mnt/root"
    )
    expect(spec).toEqual({
      process: {
        user: { uid: 0, gid: 0 },
        capabilities: { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] }
      },
      root: { path: "/mnt/root", readonly: true }
    })
  })

  it("fails on a setting it does not translate, so the test cannot drift from the manifest", () => {
    const withSetting = (container: object) => ({
      ...input,
      podSpec: { ...podSpec, containers: [{ ...podSpec.containers[0], ...container }] }
    })
    expect(() => ctrRunFor(withSetting({ securityContext: { procMount: "Unmasked" } }))).toThrow(PodTranslationError)
    expect(() => ctrRunFor(withSetting({ env: [{ name: "X", valueFrom: { secretKeyRef: {} } }] }))).toThrow(/only values/)
    expect(() => ctrRunFor(withSetting({ volumeMounts: [{ name: "run", mountPath: "/x", subPath: "a" }] }))).toThrow(/subPath/)
    expect(() => ctrRunFor({ ...input, volumeSources: { run: "/t/run" } })).toThrow(/no test directory for volume tmp/)
    expect(() => ctrRunFor(withSetting({ command: ["/bin/sh"] }))).toThrow(/container.command is not translated/)
    expect(() => ctrRunFor(withSetting({ workingDir: "/tmp" }))).toThrow(/container.workingDir is not translated/)
    expect(() => ctrRunFor(withSetting({ envFrom: [{ configMapRef: { name: "c" } }] }))).toThrow(/container.envFrom/)
    expect(() => ctrRunFor({ ...input, podSpec: { ...podSpec, hostNetwork: true } })).toThrow(/pod spec.hostNetwork is not translated/)
  })
})
