// `preheat apiserver` as its own process: the kubeconfig it writes works for client-node (with the
// token) and kubectl, and SIGTERM stops it cleanly; with --workloads, a Deployment gets a pod that the
// scheduler beside the server tries to place.
import { execFileSync, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { hasKubectl, kubectlPath } from "./kubectlClient.ts"

const main = join(import.meta.dirname, "../../../src/main.ts")

interface Started {
  readonly child: ChildProcess
  readonly url: string
  readonly exited: Promise<number | null>
}

const start = (args: ReadonlyArray<string>) =>
  new Promise<Started>((resolve, reject) => {
    const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", main, "apiserver", ...args], {
      env: { ...process.env, NO_COLOR: "1" }
    })
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(stdout)
      if (match) resolve({ child, url: match[1]!, exited })
    })
    void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)))
  })

describe("preheat apiserver", () => {
  it("writes a kubeconfig client-node accepts for plain http, token included; SIGTERM stops it", async () => {
    const directory = mkdtempSync(join(tmpdir(), "preheat-apiserver-"))
    const kubeconfig = join(directory, "kubeconfig")
    const server = await start(["--port", "0", "--token", "secret-token", "--kubeconfig-out", kubeconfig])
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const written = parse(readFileSync(kubeconfig, "utf8"))
      expect(written.clusters[0].cluster).toEqual({ server: server.url, "insecure-skip-tls-verify": true })
      expect(written.users[0].user).toEqual({ token: "secret-token" })

      const config = new KubeConfig()
      config.loadFromFile(kubeconfig)
      const namespaces = await config.makeApiClient(CoreV1Api).listNamespace()
      expect(namespaces.items.map((n) => n.metadata?.name)).toEqual(["default", "kube-node-lease", "kube-public", "kube-system"])
      const created = (await config.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: "apps.kruise.io",
        version: "v1alpha1",
        namespace: "default",
        plural: "imagepulljobs",
        body: {
          apiVersion: "apps.kruise.io/v1alpha1",
          kind: "ImagePullJob",
          metadata: { name: "from-client-node" },
          spec: { image: "nginx" }
        }
      })) as { spec: Record<string, unknown> }
      expect(created.spec).toMatchObject({ image: "nginx", parallelism: 1 })
      expect((await fetch(`${server.url}/api/v1/namespaces`)).status).toBe(401)
    } finally {
      server.child.kill("SIGTERM")
    }
    // Interrupted by the signal, the scope closed the server: 130 is Effect's runMain code for that.
    expect(await server.exited).toBe(130)
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow()
  })

  it.skipIf(!hasKubectl)("without a token, kubectl works with the kubeconfig it writes", async () => {
    const directory = mkdtempSync(join(tmpdir(), "preheat-apiserver-"))
    const kubeconfig = join(directory, "kubeconfig")
    const server = await start(["--kubeconfig-out", kubeconfig])
    try {
      const out = execFileSync(
        kubectlPath,
        ["--kubeconfig", kubeconfig, "--cache-dir", join(directory, "cache"), "get", "namespaces", "-o", "name"],
        {
          encoding: "utf8"
        }
      )
      expect(out).toBe("namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system\n")
    } finally {
      server.child.kill("SIGINT")
    }
    expect(await server.exited).toBe(130)
  })

  it("--workloads runs the workload controllers and the scheduler beside the server", async () => {
    const server = await start(["--workloads"])
    try {
      const post = (path: string, body: object) =>
        fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      const node = {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "node-1" },
        spec: { taints: [{ key: "held", effect: "NoSchedule" }] }
      }
      expect((await post("/api/v1/nodes", node)).status).toBe(201)
      const ready = await fetch(`${server.url}/api/v1/nodes/node-1/status`, {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ status: { conditions: [{ type: "Ready", status: "True" }] } })
      })
      expect(ready.status).toBe(200)
      const deployment = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx:1.25.3" }] } }
        }
      }
      expect((await post("/apis/apps/v1/namespaces/default/deployments", deployment)).status).toBe(201)
      // The Deployment and ReplicaSet controllers made the pod; the scheduler keeps it off the tainted node.
      let condition: unknown
      for (let i = 0; i < 200 && condition === undefined; i++) {
        const pods = (await (await fetch(`${server.url}/api/v1/namespaces/default/pods`)).json()) as { items: Array<any> }
        condition = pods.items[0]?.status?.conditions?.find((c: any) => c.type === "PodScheduled")
        if (condition === undefined) await new Promise((done) => setTimeout(done, 50))
      }
      expect(condition).toMatchObject({
        status: "False",
        reason: "Unschedulable",
        message: "0/1 nodes are available: 1 node(s) had untolerated taint {held: }."
      })
    } finally {
      server.child.kill("SIGTERM")
    }
    expect(await server.exited).toBe(130)
  })
})
