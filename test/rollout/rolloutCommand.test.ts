// `preheat rollout` as a user runs it: the command in its own process (src/main.ts), against the
// embedded API server with the controller and three node daemons on scriptable fake runtimes.
import { spawn } from "node:child_process"
import { join } from "node:path"
import { Effect, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { imageChanges, setImagePatch } from "../../src/rollout/imageChanges.ts"
import { readTemplate } from "../../src/rollout/podTemplate.ts"
import { hasKubectl, kubectlFor } from "../harness/apiserver/kubectlClient.ts"
import { eventually } from "../support/eventually.ts"
import { deployWithPods, startRolloutCluster } from "./rolloutCluster.ts"
import type { RolloutCluster } from "./rolloutCluster.ts"

const main = join(import.meta.dirname, "../../src/main.ts")
const namespace = "shop"

let cluster: RolloutCluster
beforeAll(async () => {
  cluster = await startRolloutCluster({ nodes: 3, namespace })
})
afterAll(async () => {
  await cluster.close()
})

interface Run {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** The command in a child process, on $KUBECONFIG (no --kubeconfig, no -n: both from the environment, as kubectl). */
interface RunOptions {
  /** Sends `signal` (default SIGINT) once stderr satisfies this. */
  readonly interruptWhen?: (stderr: string) => boolean
  readonly signal?: NodeJS.Signals
}

const rollout = (args: ReadonlyArray<string>, options: RunOptions = {}) =>
  new Promise<Run>((resolve, reject) => {
    const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", main, "rollout", ...args], {
      env: { ...process.env, KUBECONFIG: cluster.kubeconfig, NO_COLOR: "1" }
    })
    let stdout = ""
    let stderr = ""
    let interrupted = false
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
      if (!interrupted && options.interruptWhen?.(stderr) === true) {
        interrupted = true
        child.kill(options.signal ?? "SIGINT")
      }
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`preheat rollout did not finish within 60 s\n${stdout}\n${stderr}`))
    }, 60_000)
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })

const get = (resource: (typeof resources)[keyof typeof resources], name: string) =>
  cluster.run(cluster.api.get(resource, { namespace, name }).pipe(Effect.orDie))

const jobsFor = async (image: string): Promise<ReadonlyArray<KubeObject>> => {
  const list = await cluster.run(cluster.api.list(resources.imagePullJob, { namespace }).pipe(Effect.orDie))
  return list.items.filter((j) => (j["spec"] as { image: string }).image === image)
}

const images = (deployment: KubeObject): ReadonlyArray<string> =>
  ((deployment["spec"] as any).template.spec.containers as Array<{ image: string }>).map((c) => c.image)

const containers = [
  { name: "web", image: "nginx:1.25" },
  { name: "sidecar", image: "busybox:1.36" }
]

describe("preheat rollout", () => {
  it("pre-pulls on the pods' nodes, shows the view, and patches the workload only after the job completed", async () => {
    await deployWithPods(cluster, namespace, "web", containers, 3)
    const run = await rollout(["deployment/web", "--image", "web=nginx:1.26"])
    expect(run.stderr).toMatch(
      /^pre-pulling on 3 nodes before updating deployment\.apps\/web: ImagePullJob web-web-\w{5} in namespace shop\n$/
    )
    expect(run.code).toBe(0)
    // Plain frames of the status view (stdout is a pipe), the last one completed, then kubectl's line.
    expect(run.stdout).toMatch(/ImagePullJob web-web-\w{5} {2}nginx:1\.26 {2}completed\n {2}\[#{20}\] 100% {2}desired 3/)
    expect(run.stdout.endsWith("\ndeployment.apps/web image updated\n")).toBe(true)

    const [job, ...others] = await jobsFor("nginx:1.26")
    expect(others).toEqual([])
    const deployment = await get(resources.deployment, "web")
    expect(job?.["spec"]).toMatchObject({
      selector: { names: ["node-1", "node-2", "node-3"] },
      completionPolicy: { type: "Always", ttlSecondsAfterFinished: 3600 }
    })
    expect(job?.metadata.ownerReferences).toEqual([
      { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: deployment.metadata.uid }
    ])
    expect(job?.["status"]).toMatchObject({ desired: 3, succeeded: 3, failed: 0 })
    expect((job!["status"] as { completionTime?: string }).completionTime).toBeDefined()
    expect(images(deployment)).toEqual(["nginx:1.26", "busybox:1.36"])
    expect(deployment.metadata.generation).toBe(2)
    // resourceVersions are one sequence across kinds: the patch came after the job's last (completing) write.
    expect(Number(deployment.metadata.resourceVersion)).toBeGreaterThan(Number(job?.metadata.resourceVersion))
    for (const runtime of cluster.runtimes) expect(await cluster.run(runtime.hasImage("nginx:1.26"))).toBe(true)
  })

  it("completes at once where the nodes have the image already, without pulling it again", async () => {
    await deployWithPods(cluster, namespace, "again", containers, 3)
    const pullsBefore = await Promise.all(cluster.runtimes.map((r) => cluster.run(r.pulls)))
    const run = await rollout(["deploy/again", "--image", "web=nginx:1.26"])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout.endsWith("\ndeployment.apps/again image updated\n")).toBe(true)
    const pullsAfter = await Promise.all(cluster.runtimes.map((r) => cluster.run(r.pulls)))
    expect(pullsAfter.map((p) => p.length)).toEqual(pullsBefore.map((p) => p.length))
  })

  it.skipIf(!hasKubectl)("sends kubectl set image's patch: the same bytes kubectl sends for the same change", async () => {
    await deployWithPods(cluster, namespace, "twin", containers, 0)
    // Asynchronous: the API server runs in this process.
    const log = await kubectlFor(cluster)([
      "-n",
      namespace,
      "set",
      "image",
      "deployment/twin",
      "sidecar=busybox:1.37",
      "--dry-run=server",
      "-v=8"
    ])
    const sent = /"Request Body" body="(\{.*\})"/.exec(log.stderr)
    expect(sent, log.stderr).not.toBeNull()
    const kubectlBody = JSON.parse(`"${sent![1]}"`) as string
    const template = readTemplate(await get(resources.deployment, "twin"), "deployment.apps/twin")
    if (Result.isFailure(template)) throw template.failure
    const changes = imageChanges(template.success, [{ container: "sidecar", image: "busybox:1.37" }])
    if (Result.isFailure(changes)) throw changes.failure
    expect(JSON.stringify(setImagePatch(template.success, changes.success))).toBe(kubectlBody)
  })

  it("leaves the workload untouched and lists the failed nodes when a node cannot pull", async () => {
    const before = await deployWithPods(cluster, namespace, "api", containers, 3)
    await cluster.run(cluster.runtimes[1]!.fail("nginx:1.27", { kind: "ImageNotFound", times: "always" }))
    const run = await rollout(["deploy", "api", "--image", "web=nginx:1.27"])
    expect(run.code).toBe(1)
    const lines = run.stderr.split("\n")
    expect(lines).toContain("error: pre-pull for deployment.apps/api failed; deployment.apps/api is unchanged")
    expect(lines.find((l) => /^ {2}ImagePullJob api-web-\w{5} \(nginx:1\.27\) failed on 1 of 3 nodes$/.test(l))).toBeDefined()
    expect(lines.find((l) => l.startsWith("    node-2: "))).toBeDefined()
    expect(run.stderr).toMatch(
      /the ImagePullJobs stay for inspection .*kubectl get imagepulljobs -n shop -l preheat\.kruise\.io\/rollout=\w+/
    )
    expect(run.stdout).not.toContain("image updated")

    const after = await get(resources.deployment, "api")
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion)
    expect(images(after)).toEqual(["nginx:1.25", "busybox:1.36"])
    const [job] = await jobsFor("nginx:1.27")
    expect(job?.["status"]).toMatchObject({ desired: 3, succeeded: 2, failed: 1, failedNodes: ["node-2"] })

    // Kept for inspection, but owned by the workload: garbage-collected with it.
    await cluster.run(cluster.api.delete(resources.deployment, { namespace, name: "api" }).pipe(Effect.orDie))
    for (let i = 0; i < 50 && (await jobsFor("nginx:1.27")).length > 0; i++) await new Promise((r) => setTimeout(r, 100))
    expect(await jobsFor("nginx:1.27")).toEqual([])
  })

  it("refuses a container the template does not have, in kubectl's words, before creating anything", async () => {
    await deployWithPods(cluster, namespace, "db", containers, 1)
    const run = await rollout(["deploy/db", "--image", "nope=nginx:1.29"])
    expect(run).toMatchObject({ code: 1, stdout: "", stderr: 'error: unable to find container named "nope"\n' })
    expect(await jobsFor("nginx:1.29")).toEqual([])
  })

  it("fails the nodes still pulling at --timeout (the jobs' deadline) and leaves the workload untouched", async () => {
    const before = await deployWithPods(cluster, namespace, "slow", containers, 3)
    await cluster.run(cluster.runtimes[2]!.hang("nginx:1.30"))
    const run = await rollout(["deploy/slow", "--image", "web=nginx:1.30", "--timeout", "3s"])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("error: pre-pull for deployment.apps/slow failed; deployment.apps/slow is unchanged")
    // The controller's deadline or the daemon's pull timeout (the same 3 s), whichever reports first.
    const deadline = /\n {4}node-3: (still pulling when the job ended \(job exceeds |.*exceeds the )activeDeadlineSeconds/
    expect(run.stderr).toMatch(deadline)
    expect((await get(resources.deployment, "slow")).metadata.resourceVersion).toBe(before.metadata.resourceVersion)
    const [job] = await jobsFor("nginx:1.30")
    expect(job?.["spec"]).toMatchObject({ completionPolicy: { activeDeadlineSeconds: 3 }, pullPolicy: { timeoutSeconds: 3 } })
  })

  it.each([
    ["SIGINT", "cart", "nginx:1.31"],
    ["SIGTERM", "cart2", "nginx:1.33"]
  ] as const)("on %s deletes the job, leaves the workload untouched and exits 130", async (signal, name, image) => {
    const before = await deployWithPods(cluster, namespace, name, containers, 3)
    await cluster.run(cluster.runtimes[0]!.hang(image))
    const run = await rollout([`deploy/${name}`, "--image", `web=${image}`], {
      interruptWhen: (stderr) => stderr.includes("pre-pulling"),
      signal
    })
    expect(run.code).toBe(130)
    const note = `\\ninterrupted: deleted ImagePullJob ${name}-web-\\w{5}; deployment\\.apps/${name} is unchanged\\n$`
    expect(run.stderr).toMatch(new RegExp(note))
    // Deleted before the command exits; gone once the controller has released its finalizer.
    expect((await jobsFor(image)).every((job) => job.metadata.deletionTimestamp !== undefined)).toBe(true)
    await eventually("the job gone", async () => ((await jobsFor(image)).length === 0 ? true : undefined), 10_000)
    expect((await get(resources.deployment, name)).metadata.resourceVersion).toBe(before.metadata.resourceVersion)
  })

  it.each([
    ["sts/store", resources.statefulSet, "statefulset.apps/store"],
    ["daemonset", resources.daemonSet, "daemonset.apps/agent"]
  ] as const)("rolls out %s as well", async (argument, kind, display) => {
    const name = display.split("/")[1]!
    await deployWithPods(cluster, namespace, name, [{ name: "main", image: "busybox:1.36" }], 2, kind)
    const args = argument.includes("/") ? [argument] : [argument, name]
    const run = await rollout([...args, "--image", "main=busybox:1.38"])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(`pre-pulling on 2 nodes before updating ${display}: ImagePullJob ${name}-main-`)
    expect(run.stdout.endsWith(`\n${display} image updated\n`)).toBe(true)
    const [job] = (await jobsFor("busybox:1.38")).filter((j) => j.metadata.ownerReferences?.[0]?.name === name)
    expect(job?.metadata.ownerReferences?.[0]?.kind).toBe(kind.kind)
    expect((await get(kind, name))["spec"]).toMatchObject({ template: { spec: { containers: [{ name: "main", image: "busybox:1.38" }] } } })
  })

  it("patches at once, with a note, when no pod runs on a node: there is nothing to pre-pull", async () => {
    await deployWithPods(cluster, namespace, "idle", containers, 0)
    const run = await rollout(["deploy/idle", "--image", "web=nginx:1.32"])
    expect(run).toMatchObject({
      code: 0,
      stdout: "deployment.apps/idle image updated\n",
      stderr: "no pod of deployment.apps/idle runs on a node: nothing to pre-pull\n"
    })
    expect(images(await get(resources.deployment, "idle"))).toEqual(["nginx:1.32", "busybox:1.36"])
    expect(await jobsFor("nginx:1.32")).toEqual([])
  })
})
