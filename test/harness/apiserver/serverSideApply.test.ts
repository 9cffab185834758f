// Server-side apply through kubectl (`apply --server-side`), as Flux and Argo CD's server-side mode
// use it: create, no-op re-apply, change, conflicts between field managers and --force-conflicts,
// removal of a field left out, managedFields for every write; and the apply API's own errors.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { resources } from "../../../src/kube/resources.ts"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"
import type { Kubectl } from "./kubectlClient.ts"
import { imagePullJob, ipjPath, namespace, request, startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

if (!hasKubectl) console.warn(`SKIPPED: the server-side apply kubectl tests need ${kubectlPath}, which is not installed here`)

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const apply = "application/apply-patch+yaml"

const job = (spec: string, labels = "    team: a\n") => `apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: web
  labels:
${labels}spec:
  image: nginx:1.25
  selector:
    names: [node-1]
${spec}`

const file = (kubectl: Kubectl, name: string, text: string) => {
  const path = join(kubectl.directory, name)
  writeFileSync(path, text)
  return path
}

const managed = (object: any) =>
  Object.fromEntries(
    (object.metadata.managedFields ?? []).map((m: any) => [
      `${m.manager}/${m.operation}${m.subresource ? `/${m.subresource}` : ""}`,
      m.fieldsV1
    ])
  )

describe("the apply API", () => {
  it("needs a fieldManager; force only with apply; the configuration's version must be the resource's", async () => {
    const ns = await namespace(server)
    const body = JSON.stringify(imagePullJob("api"))
    const missing = await request(server, ipjPath(ns, "api"), { method: "PATCH", contentType: apply, body })
    expect(missing.json).toMatchObject({
      code: 422,
      message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    })
    const forced = await request(server, `${ipjPath(ns, "api")}?force=true`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: "{}"
    })
    expect(forced.json).toMatchObject({
      code: 422,
      message: 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    })
    const wrong = await request(server, `${ipjPath(ns, "api")}?fieldManager=m`, {
      method: "PATCH",
      contentType: apply,
      body: "apiVersion: v1\nkind: ImagePullJob\n"
    })
    expect(wrong.json).toMatchObject({
      code: 400,
      message: "Incorrect version specified in apply patch. Specified patch version: v1, expected: apps.kruise.io/v1alpha1"
    })
    const created = await request(server, `${ipjPath(ns, "api")}?fieldManager=m`, { method: "PATCH", contentType: apply, body })
    expect(created.status).toBe(201)
    expect(created.json.metadata.managedFields).toEqual([
      {
        manager: "m",
        operation: "Apply",
        apiVersion: "apps.kruise.io/v1alpha1",
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        fieldsType: "FieldsV1",
        fieldsV1: { "f:spec": { "f:image": {} } }
      }
    ])
  })

  it("refuses list items that collide or lack their keys, naming the path", async () => {
    const ns = await namespace(server)
    const pod = (containers: unknown) => JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers } })
    const path = `/api/v1/namespaces/${ns}/pods/p?fieldManager=m`
    const twice = await request(server, path, {
      method: "PATCH",
      contentType: apply,
      body: pod([
        { name: "app", image: "a" },
        { name: "app", image: "b" }
      ])
    })
    expect(twice.json).toMatchObject({
      code: 400,
      message: 'failed to create typed patch object (/v1, Kind=Pod): .spec.containers: duplicate entries for key [name="app"]'
    })
    const unnamed = await request(server, path, { method: "PATCH", contentType: apply, body: pod([{ image: "a" }]) })
    expect(unnamed.json.message).toBe(
      'failed to create typed patch object (/v1, Kind=Pod): .spec.containers: element 0: associative list with keys has an element that omits key field "name"'
    )
    const finalizers = JSON.stringify({ ...imagePullJob("f"), metadata: { name: "f", finalizers: ["a", "a"] } })
    const repeated = await request(server, `${ipjPath(ns, "f")}?fieldManager=m`, { method: "PATCH", contentType: apply, body: finalizers })
    expect(repeated.json.message).toContain('.metadata.finalizers: duplicate entries for key [="a"]')
  })

  it("an object written without field management: its fields are first those of before-first-apply", async () => {
    const ns = await namespace(server)
    await Effect.runPromise(
      server.api.create(resources.imagePullJob, imagePullJob("old", { parallelism: 2 }, { namespace: ns }) as KubeObject)
    )
    const body = JSON.stringify(imagePullJob("old", { parallelism: 3 }))
    const refused = await request(server, `${ipjPath(ns, "old")}?fieldManager=m`, { method: "PATCH", contentType: apply, body })
    expect(refused.json).toMatchObject({
      code: 409,
      reason: "Conflict",
      message: 'Apply failed with 1 conflict: conflict with "before-first-apply" using apps.kruise.io/v1alpha1: .spec.parallelism',
      details: { causes: [{ reason: "FieldManagerConflict", field: ".spec.parallelism" }] }
    })
    const forced = await request(server, `${ipjPath(ns, "old")}?fieldManager=m&force=true`, { method: "PATCH", contentType: apply, body })
    expect(forced.status).toBe(200)
    expect(managed(forced.json)).toEqual({
      "m/Apply": { "f:spec": { "f:image": {}, "f:parallelism": {} } },
      // The same image: both own it; the CRD's defaults, set when the object was admitted, are the old writer's.
      "before-first-apply/Update": {
        "f:spec": {
          ".": {},
          "f:completionPolicy": { ".": {}, "f:type": {} },
          "f:image": {},
          "f:pullPolicy": { ".": {}, "f:backoffLimit": {}, "f:timeoutSeconds": {} }
        }
      }
    })
  })

  it("every write records its manager: fieldManager, else the User-Agent's product", async () => {
    const ns = await namespace(server)
    const created = await fetch(`${server.url}${ipjPath(ns)}`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "my-operator/1.2 (linux)" },
      body: JSON.stringify(imagePullJob("ua", { parallelism: 2 }))
    }).then((r) => r.json())
    // The CRD's defaults are set before the write is recorded: its writer owns them, as on kube-apiserver.
    const defaults = {
      "f:completionPolicy": { ".": {}, "f:type": {} },
      "f:pullPolicy": { ".": {}, "f:backoffLimit": {}, "f:timeoutSeconds": {} }
    }
    expect(managed(created)).toEqual({ "my-operator/Update": { "f:spec": { ".": {}, "f:image": {}, "f:parallelism": {}, ...defaults } } })
    const patched = await request(server, `${ipjPath(ns, "ua")}?fieldManager=scaler`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { spec: { parallelism: 3 } }
    })
    expect(managed(patched.json)).toEqual({
      "my-operator/Update": { "f:spec": { ".": {}, "f:image": {}, ...defaults } },
      "scaler/Update": { "f:spec": { "f:parallelism": {} } }
    })
    // [{}] clears managedFields, as kube-apiserver documents.
    const cleared = await request(server, ipjPath(ns, "ua"), {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { metadata: { managedFields: [{}] } }
    })
    expect(cleared.json.metadata.managedFields).toBeUndefined()
  })
})

describe.skipIf(!hasKubectl)("kubectl apply --server-side", () => {
  it("creates, re-applies without a change, changes, and shows managedFields", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(server)
    const first = file(kubectl, "job.yaml", job("  parallelism: 2\n"))
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", first])).toMatchObject({
      code: 0,
      stdout: "imagepulljob.apps.kruise.io/web serverside-applied\n"
    })
    const created = (await request(server, ipjPath(ns, "web"))).json
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", first])).toMatchObject({ code: 0 })
    const again = (await request(server, ipjPath(ns, "web"))).json
    expect(again.metadata.resourceVersion).toBe(created.metadata.resourceVersion)
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", file(kubectl, "job.yaml", job("  parallelism: 4\n"))])).toMatchObject({
      code: 0
    })
    const changed = (await request(server, ipjPath(ns, "web"))).json
    expect(changed.spec.parallelism).toBe(4)
    expect(changed.metadata.generation).toBe(2)

    const shown = await kubectl(["get", "imagepulljob", "web", "-n", ns, "-o", "yaml", "--show-managed-fields"])
    expect(parse(shown.stdout).metadata.managedFields).toEqual([
      {
        apiVersion: "apps.kruise.io/v1alpha1",
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": { "f:labels": { "f:team": {} } },
          "f:spec": { "f:image": {}, "f:parallelism": {}, "f:selector": {} }
        },
        manager: "kubectl",
        operation: "Apply",
        time: expect.any(String)
      }
    ])
    // Without the flag, kubectl hides them.
    expect(parse((await kubectl(["get", "imagepulljob", "web", "-n", ns, "-o", "yaml"])).stdout).metadata.managedFields).toBeUndefined()
  })

  it("two field managers conflict over a value; --force-conflicts takes it over", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(server)
    expect(
      await kubectl([
        "apply",
        "--server-side",
        "--field-manager=team-a",
        "-n",
        ns,
        "-f",
        file(kubectl, "a.yaml", job("  parallelism: 2\n"))
      ])
    ).toMatchObject({ code: 0 })
    const b = file(kubectl, "b.yaml", job("  parallelism: 5\n"))
    const refused = await kubectl(["apply", "--server-side", "--field-manager=team-b", "-n", ns, "-f", b])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('Apply failed with 1 conflict: conflict with "team-a": .spec.parallelism')
    expect((await request(server, ipjPath(ns, "web"))).json.spec.parallelism).toBe(2)

    expect(await kubectl(["apply", "--server-side", "--field-manager=team-b", "--force-conflicts", "-n", ns, "-f", b])).toMatchObject({
      code: 0
    })
    const taken = (await request(server, ipjPath(ns, "web"))).json
    expect(taken.spec.parallelism).toBe(5)
    expect(managed(taken)["team-a/Apply"]["f:spec"]).toEqual({ "f:image": {}, "f:selector": {} })
    expect(managed(taken)["team-b/Apply"]["f:spec"]).toMatchObject({ "f:parallelism": {} })
  })

  it("a field removed from the configuration is removed when only that manager owned it", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(server)
    const full = file(kubectl, "job.yaml", job("  parallelism: 2\n  pullSecrets: [regcred]\n", "    team: a\n    tier: web\n"))
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", full])).toMatchObject({ code: 0 })
    // Another applier also sets tier: it stays when kubectl drops it; parallelism and pullSecrets go.
    const other =
      "apiVersion: apps.kruise.io/v1alpha1\nkind: ImagePullJob\nmetadata:\n  name: web\n  labels:\n    tier: web\nspec:\n  image: nginx:1.25\n"
    expect(
      await kubectl(["apply", "--server-side", "--field-manager=other", "-n", ns, "-f", file(kubectl, "other.yaml", other)])
    ).toMatchObject({ code: 0 })
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", file(kubectl, "job.yaml", job(""))])).toMatchObject({ code: 0 })
    const pruned = (await request(server, ipjPath(ns, "web"))).json
    expect(pruned.metadata.labels).toEqual({ team: "a", tier: "web" })
    expect(pruned.spec.parallelism).toBe(1) // the CRD's default, back once the applied value is gone
    expect(pruned.spec.pullSecrets).toBeUndefined()
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", file(kubectl, "job.yaml", job("", "    other: x\n"))])).toMatchObject({
      code: 0
    })
    expect((await request(server, ipjPath(ns, "web"))).json.metadata.labels).toEqual({ other: "x", tier: "web" })
  })

  it("built-in kinds: managers of create, label and status writes; apply merges labels granularly and conflicts with an Update", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(server)
    expect(await kubectl(["create", "secret", "generic", "creds", "-n", ns, "--from-literal=user=me"])).toMatchObject({ code: 0 })
    const secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ntype: Opaque\nstringData:\n  token: t\n"
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", file(kubectl, "secret.yaml", secret)])).toMatchObject({ code: 0 })
    const stored = (await request(server, `/api/v1/namespaces/${ns}/secrets/creds`)).json
    expect(Object.keys(stored.data).sort()).toEqual(["token", "user"])
    expect(managed(stored)).toEqual({
      "kubectl/Apply": { "f:stringData": { "f:token": {} }, "f:type": {} },
      "kubectl-create/Update": { "f:data": { ".": {}, "f:user": {} }, "f:type": {} }
    })

    const node = `n-${ns}`
    const nodeYaml = (labels: string) => `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${node}\n  labels:\n${labels}`
    expect(
      await kubectl(["apply", "--server-side", "--field-manager=a", "-f", file(kubectl, "node.yaml", nodeYaml('    x: "1"\n'))])
    ).toMatchObject({ code: 0 })
    expect(await kubectl(["label", "node", node, "zone=2"])).toMatchObject({ code: 0 })
    expect(
      await kubectl(["patch", "node", node, "--subresource=status", "--type=merge", "-p", '{"status":{"capacity":{"cpu":"4"}}}'])
    ).toMatchObject({ code: 0 })
    const labelled = (await request(server, `/api/v1/nodes/${node}`)).json
    expect(labelled.metadata.labels).toEqual({ x: "1", zone: "2" })
    expect(managed(labelled)).toEqual({
      "a/Apply": { "f:metadata": { "f:labels": { "f:x": {} } } },
      "kubectl-label/Update": { "f:metadata": { "f:labels": { "f:zone": {} } } },
      "kubectl-patch/Update/status": { "f:status": { ".": {}, "f:capacity": { ".": {}, "f:cpu": {} } } }
    })
    const conflict = await kubectl([
      "apply",
      "--server-side",
      "--field-manager=a",
      "-f",
      file(kubectl, "node.yaml", nodeYaml('    x: "1"\n    zone: "3"\n'))
    ])
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl-label" using v1: .metadata.labels.zone')
  })

  it("applies the status subresource, and every built-in kind served", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(server)
    expect(await kubectl(["apply", "--server-side", "-n", ns, "-f", file(kubectl, "job.yaml", job(""))])).toMatchObject({ code: 0 })
    const status = "apiVersion: apps.kruise.io/v1alpha1\nkind: ImagePullJob\nmetadata:\n  name: web\nstatus:\n  desired: 3\n  active: 1\n"
    const applied = await kubectl([
      "apply",
      "--server-side",
      "--subresource=status",
      "--field-manager=ctl",
      "-n",
      ns,
      "-f",
      file(kubectl, "s.yaml", status)
    ])
    expect(applied).toMatchObject({ code: 0 })
    const object = (await request(server, ipjPath(ns, "web"))).json
    expect(object.status).toMatchObject({ desired: 3, active: 1 })
    expect(managed(object)["ctl/Apply/status"]).toEqual({ "f:status": { "f:active": {}, "f:desired": {} } })

    const kinds = [
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}-x\n  labels:\n    team: a\n`,
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ${ns}\nspec:\n  containers:\n  - name: app\n    image: nginx\n`,
      `apiVersion: v1\nkind: Event\nmetadata:\n  name: e\n  namespace: ${ns}\ninvolvedObject:\n  kind: Pod\n  name: p\nreason: Test\n`,
      `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l\n  namespace: ${ns}\nspec:\n  holderIdentity: me\n`
    ]
    for (const [i, text] of kinds.entries()) {
      const result = await kubectl(["apply", "--server-side", "-f", file(kubectl, `kind-${i}.yaml`, text)])
      expect(result, text).toMatchObject({ code: 0, stdout: expect.stringContaining("serverside-applied") })
    }
    const pod = (await request(server, `/api/v1/namespaces/${ns}/pods/p`)).json
    expect(managed(pod)["kubectl/Apply"]).toEqual({
      "f:spec": { "f:containers": { 'k:{"name":"app"}': { ".": {}, "f:image": {}, "f:name": {} } } }
    })
  })

  it("client-side apply and edits keep working, recorded as Updates", async () => {
    const kubectl = kubectlFor(server)
    const ns = await namespace(server)
    expect(await kubectl(["apply", "-n", ns, "-f", file(kubectl, "job.yaml", job("  parallelism: 2\n"))])).toMatchObject({ code: 0 })
    expect(await kubectl(["apply", "-n", ns, "-f", file(kubectl, "job.yaml", job("  parallelism: 3\n"))])).toMatchObject({ code: 0 })
    const object = (await request(server, ipjPath(ns, "web"))).json
    expect(object.spec.parallelism).toBe(3)
    expect(Object.keys(managed(object))).toEqual(["kubectl-client-side-apply/Update"])
  })
})
