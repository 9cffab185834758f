// kubectl against the embedded API server's apps/v1 workloads, as far as pre-pulling around
// rollouts needs them: apply, get (kubectl's columns), set image (a strategic merge patch of the
// template's containers by name), status writes, defaults, and kube-apiserver's refusals.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { request, startServer, unique } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"
import type { Kubectl } from "./kubectlClient.ts"

if (!hasKubectl) console.warn(`SKIPPED: the workload kubectl tests need ${kubectlPath}, which is not installed here`)

let server: RunningServer
beforeAll(async () => {
  if (hasKubectl) server = await startServer()
})
afterAll(async () => {
  if (hasKubectl) await server.close()
})

const setUp = async (): Promise<{
  readonly kubectl: Kubectl
  readonly ns: string
  readonly file: (name: string, text: string) => string
}> => {
  const kubectl = kubectlFor(server)
  const ns = unique("apps")
  expect((await kubectl(["create", "namespace", ns])).code).toBe(0)
  const file = (name: string, text: string) => {
    const path = join(kubectl.directory, name)
    writeFileSync(path, text)
    return path
  }
  return { kubectl, ns, file }
}

const deployment = (name: string, selectorApp: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  annotations:
    apps.kruise.io/image-predownload-parallelism: "5"
spec:
  replicas: 3
  selector:
    matchLabels:
      app: ${selectorApp}
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
      - name: sidecar
        image: busybox:1.36
`

describe.skipIf(!hasKubectl)("apps/v1 workloads through kubectl", () => {
  it("a Deployment applies, gets kube-apiserver's defaults and kubectl's columns, and `set image` patches one container", async () => {
    const { kubectl, ns, file } = await setUp()
    const applied = await kubectl(["apply", "-n", ns, "-f", file("web.yaml", deployment("web", "web"))])
    expect(applied.stderr).toBe("")
    expect(applied.stdout.trim()).toBe("deployment.apps/web created")

    const stored = JSON.parse((await kubectl(["get", "-n", ns, "deploy", "web", "-o", "json"])).stdout)
    expect(stored.metadata.generation).toBe(1)
    expect(stored.spec.strategy).toEqual({ type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } })
    expect(stored.spec.revisionHistoryLimit).toBe(10)
    expect(stored.spec.progressDeadlineSeconds).toBe(600)

    const wide = await kubectl(["get", "-n", ns, "deployments", "-o", "wide"])
    expect(wide.stdout.split("\n")[0]).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/)
    expect(wide.stdout).toMatch(/web\s+0\/3\s+0\s+0\s+\S+\s+web,sidecar\s+nginx:1\.25,busybox:1\.36\s+app=web/)

    const set = await kubectl(["set", "image", "-n", ns, "deployment/web", "web=nginx:1.26"])
    expect(set.stderr).toBe("")
    expect(set.stdout.trim()).toBe("deployment.apps/web image updated")
    const after = JSON.parse((await kubectl(["get", "-n", ns, "deploy", "web", "-o", "json"])).stdout)
    expect(after.spec.template.spec.containers.map((c: { image: string }) => c.image)).toEqual(["nginx:1.26", "busybox:1.36"])
    expect(after.metadata.generation).toBe(2)
  })

  it("status is a subresource: a status write keeps the spec and the generation, and READY shows it", async () => {
    const { kubectl, ns, file } = await setUp()
    await kubectl(["apply", "-n", ns, "-f", file("web.yaml", deployment("web", "web"))])
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/web/status`
    const patched = await request(server, path, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { spec: { replicas: 9 }, status: { replicas: 3, readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } }
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.json.spec.replicas).toBe(3)
    expect(patched.json.metadata.generation).toBe(1)
    const got = await kubectl(["get", "-n", ns, "deploy", "web"])
    expect(got.stdout).toMatch(/web\s+2\/3\s+3\s+2\s+/)
  })

  it("a selector that does not select the template's pods is refused at apply, in kube-apiserver's words", async () => {
    const { kubectl, ns, file } = await setUp()
    const refused = await kubectl(["apply", "-n", ns, "-f", file("bad.yaml", deployment("bad", "other"))])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(
      'The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'
    )
    const missing = await kubectl([
      "create",
      "-n",
      ns,
      "-f",
      file(
        "none.yaml",
        `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:16}]}
`
      )
    ])
    expect(missing.stderr).toContain('The StatefulSet "db" is invalid: spec.selector: Required value')
  })

  it("StatefulSet, DaemonSet, ReplicaSet and ControllerRevision are served with their short names and columns", async () => {
    const { kubectl, ns, file } = await setUp()
    const template = `  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: x, image: "registry.k8s.io/pause:3.9"}]}
`
    const applied = await kubectl([
      "apply",
      "-n",
      ns,
      "-f",
      file(
        "all.yaml",
        `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
${template}---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: d}
spec:
${template}---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: r}
spec:
${template}---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: s-1}
revision: 1
data: {spec: {template: {spec: {containers: [{name: x, image: "registry.k8s.io/pause:3.9"}]}}}}
`
      )
    ])
    expect(applied.stderr).toBe("")
    expect(applied.stdout.trim().split("\n")).toEqual([
      "statefulset.apps/s created",
      "daemonset.apps/d created",
      "replicaset.apps/r created",
      "controllerrevision.apps/s-1 created"
    ])
    expect((await kubectl(["get", "-n", ns, "sts"])).stdout).toMatch(/^NAME\s+READY\s+AGE\ns\s+0\/1\s+/)
    expect((await kubectl(["get", "-n", ns, "ds"])).stdout.split("\n")[0]).toMatch(
      /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE$/
    )
    expect((await kubectl(["get", "-n", ns, "rs"])).stdout).toMatch(/r\s+1\s+0\s+0\s+/)
    expect((await kubectl(["get", "-n", ns, "controllerrevisions"])).stdout).toMatch(/s-1\s+<none>\s+1\s+/)
    const sts = JSON.parse((await kubectl(["get", "-n", ns, "sts", "s", "-o", "json"])).stdout)
    expect(sts.spec.updateStrategy).toEqual({ type: "RollingUpdate", rollingUpdate: { partition: 0 } })
    expect(sts.spec.podManagementPolicy).toBe("OrderedReady")
    const all = await kubectl(["get", "-n", ns, "all"])
    for (const name of ["statefulset.apps/s", "daemonset.apps/d", "replicaset.apps/r"]) expect(all.stdout).toContain(name)
    expect(all.stdout).not.toContain("controllerrevision")
  })
})
