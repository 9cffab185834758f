/**
 * `kubectl preheat rollout` (issue 15): the built executable as a kubectl plugin (a
 * `kubectl-preheat` symlink on PATH), against the API server, the controller and three daemons
 * on the simulated runtime as separate processes. kubectl hands the plugin its arguments and
 * environment: $KUBECONFIG and the context's namespace are the only way it learns the cluster.
 */
import { existsSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { execFile } from "node:child_process"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Duration } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { simulatedPullTime } from "../../harness/layers/simulatedRuntime/simulatedNode.ts"
import { Cluster } from "./cluster.ts"

const root = resolve(import.meta.dirname, "../..")
const executable = join(root, "dist/preheat")
const nodes = ["node-1", "node-2", "node-3"] as const

let cluster: Cluster
let pluginDir = ""

beforeAll(async () => {
  cluster = await Cluster.startWith(async (cluster) => {
    await cluster.startNodes(nodes, { "node-type": "xxx" })
    await cluster.ok(["create", "namespace", "shop"])
    await cluster.ok(["config", "set-context", "--current", "--namespace", "shop"])
  })
  pluginDir = mkdtempSync(join(tmpdir(), "preheat-plugin-"))
  // The executable `npm test` builds; without one (npm run build only), the bundle behind a script.
  if (existsSync(executable)) {
    symlinkSync(executable, join(pluginDir, "kubectl-preheat"))
  } else {
    console.warn(`${executable} is not built: the plugin runs dist/preheat.mjs on this Node instead`)
    const script = `#!/bin/sh\nexec "${process.execPath}" "${join(root, "dist/preheat.mjs")}" "$@"\n`
    writeFileSync(join(pluginDir, "kubectl-preheat"), script, { mode: 0o755 })
  }
}, 120_000)

afterAll(async () => {
  await cluster?.stop()
})

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(cluster.dumpLogs())
  })
})

/** `kubectl preheat ARGS` with the plugin on PATH and the cluster in $KUBECONFIG, as a user runs it. */
const kubectlPreheat = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      "/usr/bin/kubectl",
      ["preheat", ...args],
      {
        timeout: 120_000,
        env: { ...process.env, PATH: `${pluginDir}:${process.env["PATH"] ?? ""}`, KUBECONFIG: cluster.kubeconfig, HOME: cluster.dir }
      },
      (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

/** A Deployment and its pods on node-1 and node-2, Ready, as kube-controller-manager and the scheduler would leave them. */
const deployWithPods = async (name: string) => {
  const applied = await cluster.applyFile(
    name,
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: [{name: web, image: nginx:1.25}, {name: sidecar, image: busybox:1.36}]
${["node-1", "node-2"]
  .map(
    (node, i) => `---
apiVersion: v1
kind: Pod
metadata: {name: ${name}-${i}, namespace: shop, labels: {app: ${name}}}
spec: {nodeName: ${node}, containers: [{name: web, image: nginx:1.25}, {name: sidecar, image: busybox:1.36}]}
`
  )
  .join("")}`
  )
  expect(applied.code, applied.stderr).toBe(0)
  for (const i of [0, 1]) {
    await cluster.ok([
      "patch",
      "pod",
      `${name}-${i}`,
      "-n",
      "shop",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } })
    ])
  }
}

describe("kubectl preheat rollout", () => {
  it("pre-pulls on the pods' nodes, then sets the image as kubectl set image does", async () => {
    await deployWithPods("web")
    const run = await kubectlPreheat(["rollout", "deploy/web", "--image", "web=nginx:1.26"])
    expect(run.stderr).toMatch(
      /^pre-pulling on 2 nodes before updating deployment\.apps\/web: ImagePullJob web-web-\w{5} in namespace shop\n$/
    )
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/ImagePullJob web-web-\w{5} {2}nginx:1\.26 {2}completed/)
    expect(run.stdout.endsWith("\ndeployment.apps/web image updated\n")).toBe(true)

    const deployment = await cluster.getYaml(["deploy", "web", "-n", "shop"])
    expect(deployment.spec.template.spec.containers.map((c: { image: string }) => c.image)).toEqual(["nginx:1.26", "busybox:1.36"])
    const jobs = await cluster.getYaml(["ipj", "-n", "shop", "-l", "preheat.kruise.io/rollout"])
    expect(jobs.items).toHaveLength(1)
    expect(jobs.items[0].spec.selector).toEqual({ names: ["node-1", "node-2"] })
    expect(jobs.items[0].status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 })
    // Both nodes report the image pulled for the job; node-3, which runs no pod, was left alone.
    for (const node of ["node-1", "node-2"]) {
      const nodeImage = await cluster.getYaml(["nodeimage", node])
      expect(nodeImage.status.imageStatuses.nginx.tags).toContainEqual(expect.objectContaining({ tag: "1.26", phase: "Succeeded" }))
    }
    expect((await cluster.getYaml(["nodeimage", "node-3"])).spec.images?.nginx).toBeUndefined()
  })

  it("leaves the workload untouched and exits 1 when the pull cannot finish within --timeout", async () => {
    await deployWithPods("slow")
    // An image the simulated registry serves slowly (its size decides): longer than the 1 s deadline.
    const image = Array.from({ length: 50 }, (_, i) => `registry.example/big:${i}`).find(
      (candidate) => Duration.toMillis(simulatedPullTime(candidate)) > 3_000
    )!
    const run = await kubectlPreheat(["rollout", "deployment", "slow", "--image", `web=${image}`, "--timeout", "1s"])
    expect(run.code, run.stderr).toBe(1)
    expect(run.stderr).toContain("error: pre-pull for deployment.apps/slow failed; deployment.apps/slow is unchanged")
    expect(run.stderr).toMatch(/\n {4}node-1: /)
    expect(run.stderr).toMatch(/\n {4}node-2: /)
    expect(run.stdout).not.toContain("image updated")
    const deployment = await cluster.getYaml(["deploy", "slow", "-n", "shop"])
    expect(deployment.metadata.generation).toBe(1)
    expect(deployment.spec.template.spec.containers[0].image).toBe("nginx:1.25")
  })
})
