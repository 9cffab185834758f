// kubectl against the embedded API server, as a user drives it. Skips (visibly) where
// /usr/bin/kubectl is missing; CI has it.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { eventually } from "../../support/eventually.ts"
import { request, startServer, unique } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"
import type { Kubectl } from "./kubectlClient.ts"

if (!hasKubectl) console.warn(`SKIPPED: the kubectl tests need ${kubectlPath}, which is not installed here`)

const title = hasKubectl
  ? "kubectl against the embedded API server"
  : `kubectl against the embedded API server (SKIPPED: no ${kubectlPath})`

let server: RunningServer
beforeAll(async () => {
  if (hasKubectl) server = await startServer()
})
afterAll(async () => {
  if (hasKubectl) await server.close()
})

const namespace = async (kubectl: Kubectl): Promise<string> => {
  const name = unique("kubectl")
  const created = await kubectl(["create", "namespace", name])
  expect(created.stderr).toBe("")
  return name
}

const manifest = (kubectl: Kubectl, name: string, text: string): string => {
  const file = join(kubectl.directory, name)
  writeFileSync(file, text)
  return file
}

// The seed document's ImagePullJob with a valid selector (its own example sets names and
// matchLabels together, which the API rejects).
const jobYaml = (parallelism: number) => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: job-with-always
spec:
  image: nginx:1.9.1
  parallelism: ${parallelism}
  selector:
    names:
    - node-1
    - node-2
  completionPolicy:
    type: Always
    activeDeadlineSeconds: 1200
    ttlSecondsAfterFinished: 300
  pullPolicy:
    backoffLimit: 3
    timeoutSeconds: 300
`

const nodeImageYaml = (name: string) => `apiVersion: apps.kruise.io/v1alpha1
kind: NodeImage
metadata:
  name: ${name}
  labels:
    kubernetes.io/os: linux
spec: {}
`

describe.skipIf(!hasKubectl)(title, () => {
  it("apply creates, re-applies as a merge patch, and reports unchanged", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    const file = manifest(kubectl, "job.yaml", jobYaml(10))
    expect(await kubectl(["apply", "-n", ns, "-f", file])).toMatchObject({
      code: 0,
      stdout: "imagepulljob.apps.kruise.io/job-with-always created\n",
      stderr: ""
    })
    expect((await kubectl(["apply", "-n", ns, "-f", file])).stdout).toBe("imagepulljob.apps.kruise.io/job-with-always unchanged\n")
    const changed = manifest(kubectl, "job.yaml", jobYaml(5))
    const configured = await kubectl(["apply", "-n", ns, "-f", changed, "-v=6"])
    expect(configured.stdout).toBe("imagepulljob.apps.kruise.io/job-with-always configured\n")
    expect(configured.stderr).toMatch(
      /PATCH http:\/\/127\.0\.0\.1:\d+\/apis\/apps\.kruise\.io\/v1alpha1\/namespaces\/.*\/imagepulljobs\/job-with-always\?fieldManager=kubectl-client-side-apply&fieldValidation=Strict 200 OK/
    )
    const stored = await request(server, `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagepulljobs/job-with-always`)
    expect(stored.json.spec).toMatchObject({ parallelism: 5, pullPolicy: { timeoutSeconds: 300, backoffLimit: 3 } })
    expect(stored.json.metadata.generation).toBe(2)
  })

  it("get ipj prints the printer columns, with the status the controller wrote", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    await kubectl(["apply", "-n", ns, "-f", manifest(kubectl, "job.yaml", jobYaml(10))])
    const patched = await kubectl([
      "patch",
      "-n",
      ns,
      "ipj",
      "job-with-always",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status: { desired: 2, active: 1, succeeded: 1, failed: 0, message: "job is running, progress 50.0%" } })
    ])
    expect(patched.stdout).toBe("imagepulljob.apps.kruise.io/job-with-always patched\n")
    const { stdout } = await kubectl(["get", "-n", ns, "ipj"])
    const [header, row] = stdout.trimEnd().split("\n")
    expect(header?.split(/\s{2,}/)).toEqual(["NAME", "TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE", "MESSAGE"])
    expect(row?.split(/\s{2,}/)).toEqual([
      "job-with-always",
      "2",
      "1",
      "1",
      "0",
      expect.stringMatching(/^\d+s$/),
      "job is running, progress 50.0%"
    ])
  })

  it("get nodeimage -o yaml; patch --type=merge from the seed document; strategic merge is refused", async () => {
    const kubectl = kubectlFor(server)
    const name = unique("node")
    await kubectl(["apply", "-f", manifest(kubectl, "ni.yaml", nodeImageYaml(name))])
    const patch = '{"spec":{"images":{"ubuntu":{"tags":[{"tag":"latest","pullPolicy":{"ttlSecondsAfterFinished":300}}]}}}}'
    expect(await kubectl(["patch", "nodeimage", name, "--type=merge", "-p", patch])).toMatchObject({
      code: 0,
      stdout: `nodeimage.apps.kruise.io/${name} patched\n`
    })
    const { stdout } = await kubectl(["get", "nodeimage", name, "-o", "yaml"])
    const object = parse(stdout)
    expect(object.metadata.labels).toEqual({ "kubernetes.io/os": "linux" })
    // The CRD's defaults filled in what the patch left out.
    expect(object.spec.images.ubuntu.tags).toEqual([
      { tag: "latest", pullPolicy: { ttlSecondsAfterFinished: 300 }, version: 0, imagePullPolicy: "IfNotPresent" }
    ])
    const table = await kubectl(["get", "ni", name])
    expect(table.stdout.split("\n")[0]?.split(/\s{2,}/)).toEqual(["NAME", "DESIRED", "PULLING", "SUCCEED", "FAILED", "AGE"])
    const strategic = await kubectl(["patch", "nodeimage", name, "-p", patch])
    expect(strategic.code).not.toBe(0)
    expect(strategic.stderr).toContain(
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json"
    )
  })

  it("delete removes the object and waits for it to go", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    await kubectl(["apply", "-n", ns, "-f", manifest(kubectl, "job.yaml", jobYaml(1))])
    expect(await kubectl(["delete", "-n", ns, "ipj", "job-with-always"])).toMatchObject({
      code: 0,
      stdout: `imagepulljob.apps.kruise.io "job-with-always" deleted\n`
    })
    const after = await kubectl(["get", "-n", ns, "ipj", "job-with-always"])
    expect(after.stderr).toBe(`Error from server (NotFound): imagepulljobs.apps.kruise.io "job-with-always" not found\n`)
  })

  it("explain reads the CRD's schema from OpenAPI v3", async () => {
    const kubectl = kubectlFor(server)
    const { code, stdout } = await kubectl(["explain", "imagepulljob.spec"])
    expect(code).toBe(0)
    expect(stdout).toContain("KIND:       ImagePullJob")
    expect(stdout).toContain("FIELD: spec <Object>")
    expect(stdout).toMatch(/image\t<string> -required-/)
    expect(stdout).toContain("What to pull, where, how fast and for how long.")
  })

  it("an invalid object is rejected with the SPEC messages; an unknown field under Strict too", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    const seedExample = jobYaml(10).replace("    - node-2\n", "    - node-2\n    matchLabels:\n      node-type: xxx\n")
    const invalid = await kubectl(["apply", "-n", ns, "-f", manifest(kubectl, "bad.yaml", seedExample)])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toBe(
      `The ImagePullJob "job-with-always" is invalid: spec.selector: Invalid value: "object": can not set both names and labelSelector in this spec.selector\n`
    )
    const unknown = await kubectl([
      "apply",
      "-n",
      ns,
      "-f",
      manifest(kubectl, "unknown.yaml", jobYaml(1).replace("  image:", "  imagge: x\n  image:"))
    ])
    expect(unknown.stderr).toContain(`strict decoding error: unknown field "spec.imagge"`)
  })

  it("get -w prints the list, then each change", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    await kubectl(["apply", "-n", ns, "-f", manifest(kubectl, "job.yaml", jobYaml(10))])
    const watching = kubectl.spawn(["get", "-n", ns, "ipj", "-w"])
    try {
      await eventually(
        "the list",
        () => {
          expect(watching.output()).toContain("job-with-always")
          return true
        },
        5_000,
        20
      )
      await kubectl([
        "patch",
        "-n",
        ns,
        "ipj",
        "job-with-always",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"desired":7,"message":"job has completed"}}'
      ])
      await eventually(
        "the change",
        () => {
          expect(watching.output()).toMatch(/job-with-always\s+7\s+0\s+0\s+0\s+\S+\s+job has completed/)
          return true
        },
        5_000,
        20
      )
      expect(
        watching
          .output()
          .split("\n")[0]
          ?.split(/\s{2,}/)[0]
      ).toBe("NAME")
    } finally {
      await watching.stop()
    }
  })

  it("wait --for=jsonpath sees a status change through its watch", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(kubectl)
    await kubectl(["apply", "-n", ns, "-f", manifest(kubectl, "job.yaml", jobYaml(10))])
    const waiting = kubectl(["wait", "-n", ns, "ipj/job-with-always", "--for=jsonpath={.status.succeeded}=2", "--timeout=10s"])
    await new Promise((resolve) => setTimeout(resolve, 300))
    await request(server, `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagepulljobs/job-with-always/status`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { status: { succeeded: 2 } }
    })
    expect(await waiting).toMatchObject({ code: 0, stdout: "imagepulljob.apps.kruise.io/job-with-always condition met\n" })
  })

  it("built-in kinds: apply and re-apply Secrets, Nodes and Namespaces; cordon; tables", async () => {
    const kubectl = kubectlFor(server)
    const ns = unique("core")
    const node = unique("node")
    const text = (label: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: v1
kind: Secret
metadata:
  name: regcred
  namespace: ${ns}
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths":{}}'
---
apiVersion: v1
kind: Node
metadata:
  name: ${node}
  labels: {zone: ${label}}
`
    const created = await kubectl(["apply", "-f", manifest(kubectl, "core.yaml", text("a"))])
    expect(created.stdout).toBe(`namespace/${ns} created\nsecret/regcred created\nnode/${node} created\n`)
    const reapplied = await kubectl(["apply", "-f", manifest(kubectl, "core.yaml", text("b"))])
    // kubectl always re-sends stringData (the server stores it as data), as against a real server.
    expect(reapplied.stdout).toBe(`namespace/${ns} unchanged\nsecret/regcred configured\nnode/${node} configured\n`)
    expect((await kubectl(["get", "node", node, "-o", "jsonpath={.metadata.labels.zone}"])).stdout).toBe("b")
    expect((await kubectl(["cordon", node])).stdout).toBe(`node/${node} cordoned\n`)
    const secrets = await kubectl(["get", "-n", ns, "secrets"])
    expect(secrets.stdout).toMatch(/^NAME\s+TYPE\s+DATA\s+AGE\nregcred\s+kubernetes\.io\/dockerconfigjson\s+1\s+\d+s\n$/)
    const nodes = await kubectl(["get", "node", node])
    expect(nodes.stdout).toMatch(new RegExp(`${node}\\s+Unknown,SchedulingDisabled\\s+<none>`))
  })

  it("kubectl sends no credentials to an http:// server, so a token-guarded one refuses it", async () => {
    // client-go reads a kubeconfig's user credentials only for https servers (clientcmd's
    // IsConfigTransportTLS): over plain http the token stays home and the answer is 401.
    const guarded = await startServer({ token: "t0ken" })
    try {
      const refused = await kubectlFor(guarded, { token: "t0ken" })(["get", "ns", "default"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(
        "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
      )
    } finally {
      await guarded.close()
    }
  })
})
