import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../support/eventually.ts"
import { imagePullJob, ipjPath, kruise, namespace, request, startServer, unique } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const create = async (ns: string, object: Record<string, unknown>) => {
  const created = await request(server, ipjPath(ns), { method: "POST", body: object })
  expect(created.status, created.text).toBe(201)
  return created.json
}

const nodeImagePath = (name = "") => `/apis/apps.kruise.io/v1alpha1/nodeimages${name === "" ? "" : `/${name}`}`
const mergePatch = "application/merge-patch+json"
const jsonPatch = "application/json-patch+json"
const strategic = "application/strategic-merge-patch+json"

describe("create, get, update", () => {
  it("create answers 201 with the server's fields; get and list return it", async () => {
    const ns = await namespace(server)
    const created = await create(ns, imagePullJob("a"))
    expect(created.metadata).toMatchObject({ name: "a", namespace: ns, generation: 1 })
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(0)
    const got = await request(server, ipjPath(ns, "a"))
    expect(got.json).toEqual(created)
    const listed = await request(server, ipjPath(ns))
    expect(listed.json).toMatchObject({ apiVersion: kruise, kind: "ImagePullJobList", items: [created] })
    expect(listed.json.metadata.resourceVersion).toMatch(/^\d+$/)
  })

  it("errors are Status objects shaped as kube-apiserver's", async () => {
    const ns = await namespace(server)
    await create(ns, imagePullJob("twice"))
    const again = await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("twice") })
    expect(again.status).toBe(409)
    expect(again.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `imagepulljobs.apps.kruise.io "twice" already exists`,
      reason: "AlreadyExists",
      details: { name: "twice", group: "apps.kruise.io", kind: "imagepulljobs" },
      code: 409
    })
    const missing = await request(server, ipjPath(ns, "nope"))
    expect(missing.json).toMatchObject({ reason: "NotFound", code: 404, message: `imagepulljobs.apps.kruise.io "nope" not found` })
    const pod = await request(server, `/api/v1/namespaces/${ns}/pods/nope`)
    expect(pod.json).toMatchObject({ message: `pods "nope" not found`, details: { name: "nope", group: "", kind: "pods" } })
  })

  it("content goes only into a namespace that exists, and the one of the request", async () => {
    const absent = unique("absent")
    const missing = await request(server, ipjPath(absent), { method: "POST", body: imagePullJob("a") })
    expect(missing.status).toBe(404)
    expect(missing.json).toMatchObject({ reason: "NotFound", message: `namespaces "${absent}" not found` })
    const ns = await namespace(server)
    const elsewhere = await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("a", {}, { namespace: "default" }) })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.json.message).toBe("the namespace of the provided object does not match the namespace sent on the request")
  })

  it("PUT replaces, needs the current resourceVersion (409 when stale, 422 when absent)", async () => {
    const ns = await namespace(server)
    const created = await create(ns, imagePullJob("job", {}, { labels: { a: "1" } }))
    const replaced = await request(server, ipjPath(ns, "job"), {
      method: "PUT",
      body: { ...created, metadata: { ...created.metadata, labels: { b: "2" } }, spec: { image: "nginx:1.26" } }
    })
    expect(replaced.status).toBe(200)
    expect(replaced.json.metadata.labels).toEqual({ b: "2" })
    expect(replaced.json.metadata.generation).toBe(2)
    const stale = await request(server, ipjPath(ns, "job"), { method: "PUT", body: created })
    expect(stale.status).toBe(409)
    expect(stale.json).toMatchObject({
      reason: "Conflict",
      message: `Operation cannot be fulfilled on imagepulljobs.apps.kruise.io "job": the object has been modified; please apply your changes to the latest version and try again`
    })
    const { resourceVersion: _, ...withoutVersion } = created.metadata
    const unconditional = await request(server, ipjPath(ns, "job"), { method: "PUT", body: { ...created, metadata: withoutVersion } })
    expect(unconditional.status).toBe(422)
    expect(unconditional.json.details.causes).toEqual([
      { reason: "FieldValueInvalid", message: "Invalid value: 0x0: must be specified for an update", field: "metadata.resourceVersion" }
    ])
    const renamed = await request(server, ipjPath(ns, "job"), {
      method: "PUT",
      body: { ...replaced.json, metadata: { ...replaced.json.metadata, name: "other" } }
    })
    expect(renamed.json.message).toBe("the name of the object (other) does not match the name on the URL (job)")
  })

  it("the status subresource: the main resource ignores status, /status changes only status", async () => {
    const ns = await namespace(server)
    const created = await create(ns, imagePullJob("job"))
    const main = await request(server, ipjPath(ns, "job"), {
      method: "PATCH",
      contentType: mergePatch,
      body: { status: { message: "ignored" } }
    })
    expect(main.json.status).toBeUndefined()
    const status = await request(server, `${ipjPath(ns, "job")}/status`, {
      method: "PATCH",
      contentType: mergePatch,
      body: { spec: { image: "ignored:1" }, status: { desired: 2, message: "running" } }
    })
    expect(status.status).toBe(200)
    expect(status.json.status).toEqual({ desired: 2, message: "running", active: 0, succeeded: 0, failed: 0 })
    expect(status.json.spec.image).toBe("nginx:1.25")
    expect(status.json.metadata.generation).toBe(1)
    const put = await request(server, `${ipjPath(ns, "job")}/status`, { method: "PUT", body: { ...status.json, status: { desired: 5 } } })
    expect(put.json.status).toMatchObject({ desired: 5 })
    expect((await request(server, `${ipjPath(ns, "job")}/status`)).json.status.desired).toBe(5)
    expect(created.status).toBeUndefined()
  })
})

describe("patches", () => {
  it("merge patch: objects merge, lists replace, null deletes, a resourceVersion is a precondition", async () => {
    const ns = await namespace(server)
    const created = await create(ns, imagePullJob("job", { pullSecrets: ["a", "b"] }, { labels: { x: "1", y: "2" } }))
    const patched = await request(server, ipjPath(ns, "job"), {
      method: "PATCH",
      contentType: mergePatch,
      body: { metadata: { labels: { x: null, z: "3" } }, spec: { pullSecrets: ["c"], parallelism: 3 } }
    })
    expect(patched.json.metadata.labels).toEqual({ y: "2", z: "3" })
    expect(patched.json.spec).toMatchObject({ pullSecrets: ["c"], parallelism: 3, image: "nginx:1.25" })
    expect(patched.json.metadata.generation).toBe(2)
    const stale = await request(server, ipjPath(ns, "job"), {
      method: "PATCH",
      contentType: mergePatch,
      body: { metadata: { resourceVersion: created.metadata.resourceVersion }, spec: { parallelism: 4 } }
    })
    expect(stale.status).toBe(409)
  })

  it("JSON patch, with test operations as preconditions", async () => {
    const ns = await namespace(server)
    const created = await create(ns, imagePullJob("job", { pullSecrets: ["a"] }))
    const ok = await request(server, ipjPath(ns, "job"), {
      method: "PATCH",
      contentType: jsonPatch,
      body: [
        { op: "test", path: "/metadata/resourceVersion", value: created.metadata.resourceVersion },
        { op: "add", path: "/spec/pullSecrets/-", value: "b" },
        { op: "replace", path: "/spec/image", value: "busybox:1.36" },
        { op: "add", path: "/metadata/labels", value: { "app.kubernetes.io/name": "x" } },
        { op: "add", path: "/metadata/labels/app.kubernetes.io~1part-of", value: "y" }
      ]
    })
    expect(ok.status, ok.text).toBe(200)
    expect(ok.json.spec).toMatchObject({ pullSecrets: ["a", "b"], image: "busybox:1.36" })
    expect(ok.json.metadata.labels).toEqual({ "app.kubernetes.io/name": "x", "app.kubernetes.io/part-of": "y" })
    const failed = await request(server, ipjPath(ns, "job"), {
      method: "PATCH",
      contentType: jsonPatch,
      body: [
        { op: "test", path: "/spec/image", value: "nginx:1.25" },
        { op: "remove", path: "/spec/pullSecrets" }
      ]
    })
    expect(failed.status).toBe(422)
    expect(failed.json).toMatchObject({
      reason: "Invalid",
      details: { causes: [{ reason: "UnexpectedServerResponse", message: "testing value /spec/image failed: test failed" }] }
    })
    const malformed = await request(server, ipjPath(ns, "job"), { method: "PATCH", contentType: jsonPatch, body: { op: "add" } })
    expect(malformed.status).toBe(400)
  })

  it("strategic merge patch is 415 on custom resources, as on a real server", async () => {
    const name = unique("node")
    await request(server, nodeImagePath(), {
      method: "POST",
      body: { apiVersion: kruise, kind: "NodeImage", metadata: { name }, spec: {} }
    })
    const refused = await request(server, nodeImagePath(name), { method: "PATCH", contentType: strategic, body: { spec: {} } })
    expect(refused.status).toBe(415)
    expect(refused.json).toMatchObject({
      reason: "UnsupportedMediaType",
      message:
        "the body of the request was in an unknown format - accepted media types include: " +
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    })
  })

  it("strategic merge patch on built-in kinds merges mergeable lists by key", async () => {
    const ns = await namespace(server)
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", finalizers: ["a/b"] },
      spec: {
        containers: [
          { name: "main", image: "nginx", env: [{ name: "A", value: "1" }] },
          { name: "side", image: "busybox" }
        ]
      }
    }
    expect((await request(server, `/api/v1/namespaces/${ns}/pods`, { method: "POST", body: pod })).status).toBe(201)
    const patched = await request(server, `/api/v1/namespaces/${ns}/pods/p`, {
      method: "PATCH",
      contentType: strategic,
      body: {
        metadata: { finalizers: ["c/d"] },
        spec: {
          containers: [
            { name: "main", env: [{ name: "B", value: "2" }] },
            { name: "side", $patch: "delete" }
          ]
        }
      }
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.json.metadata.finalizers).toEqual(["a/b", "c/d"])
    expect(patched.json.spec.containers).toEqual([
      {
        name: "main",
        image: "nginx",
        env: [
          { name: "A", value: "1" },
          { name: "B", value: "2" }
        ]
      }
    ])
    const node = unique("node")
    await request(server, "/api/v1/nodes", {
      method: "POST",
      body: { apiVersion: "v1", kind: "Node", metadata: { name: node, labels: { a: "1" } } }
    })
    const cordoned = await request(server, `/api/v1/nodes/${node}`, {
      method: "PATCH",
      contentType: strategic,
      body: { spec: { unschedulable: true } }
    })
    expect(cordoned.json.spec).toEqual({ unschedulable: true })
    expect(cordoned.json.metadata.labels).toEqual({ a: "1" })
  })

  it("a patch that leaves the object unchanged keeps its resourceVersion", async () => {
    const ns = await namespace(server)
    const created = await create(ns, imagePullJob("job"))
    const same = await request(server, ipjPath(ns, "job"), {
      method: "PATCH",
      contentType: mergePatch,
      body: { spec: { image: "nginx:1.25" } }
    })
    expect(same.json.metadata.resourceVersion).toBe(created.metadata.resourceVersion)
  })
})

describe("delete", () => {
  it("answers the object; with finalizers it is marked and stays until they are removed", async () => {
    const ns = await namespace(server)
    await create(ns, imagePullJob("plain"))
    const deleted = await request(server, ipjPath(ns, "plain"), { method: "DELETE" })
    expect(deleted.status).toBe(200)
    expect(deleted.json.metadata.name).toBe("plain")
    expect((await request(server, ipjPath(ns, "plain"))).status).toBe(404)

    await create(ns, imagePullJob("held", {}, { finalizers: ["preheat.test/hold"] }))
    const marked = await request(server, ipjPath(ns, "held"), {
      method: "DELETE",
      body: { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Background" }
    })
    expect(marked.json.metadata.deletionTimestamp).toMatch(/Z$/)
    const released = await request(server, ipjPath(ns, "held"), {
      method: "PATCH",
      contentType: mergePatch,
      body: { metadata: { finalizers: null } }
    })
    expect(released.status).toBe(200)
    expect((await request(server, ipjPath(ns, "held"))).status).toBe(404)
  })

  it("honours uid and resourceVersion preconditions, and dryRun", async () => {
    const ns = await namespace(server)
    const created = await create(ns, imagePullJob("job"))
    const wrongUid = await request(server, ipjPath(ns, "job"), { method: "DELETE", body: { preconditions: { uid: "not-it" } } })
    expect(wrongUid.status).toBe(409)
    expect(wrongUid.json.message).toContain("Precondition failed: UID in precondition: not-it")
    const wrongVersion = await request(server, ipjPath(ns, "job"), { method: "DELETE", body: { preconditions: { resourceVersion: "1" } } })
    expect(wrongVersion.status).toBe(409)
    expect(wrongVersion.json.message).toContain("Precondition failed: ResourceVersion in precondition: 1")
    expect((await request(server, `${ipjPath(ns, "job")}?dryRun=All`, { method: "DELETE" })).status).toBe(200)
    expect((await request(server, ipjPath(ns, "job"))).json.metadata.uid).toBe(created.metadata.uid)
  })

  it("deleting an owner deletes its dependents; deletecollection deletes what the selector picks", async () => {
    const ns = await namespace(server)
    const parent = await request(server, `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagelistpulljobs`, {
      method: "POST",
      body: { apiVersion: kruise, kind: "ImageListPullJob", metadata: { name: "parent" }, spec: { images: ["nginx:1.25"] } }
    })
    const owner = { apiVersion: kruise, kind: "ImageListPullJob", name: "parent", uid: parent.json.metadata.uid, controller: true }
    await create(ns, imagePullJob("child", {}, { ownerReferences: [owner] }))
    await request(server, `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagelistpulljobs/parent`, { method: "DELETE" })
    expect((await request(server, ipjPath(ns, "child"))).status).toBe(404)

    await create(ns, imagePullJob("a", {}, { labels: { tier: "web" } }))
    await create(ns, imagePullJob("b", {}, { labels: { tier: "db" } }))
    const collection = await request(server, `${ipjPath(ns)}?labelSelector=tier%3Dweb`, { method: "DELETE" })
    expect(collection.json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(["a"])
    expect((await request(server, ipjPath(ns))).json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(["b"])
  })
})

describe("built-in kinds", () => {
  it("a Secret's stringData is stored base64 in data; type defaults to Opaque", async () => {
    const ns = await namespace(server)
    const created = await request(server, `/api/v1/namespaces/${ns}/secrets`, {
      method: "POST",
      body: { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { a: "eA==" }, stringData: { b: "hello" } }
    })
    expect(created.json).toMatchObject({ type: "Opaque", data: { a: "eA==", b: "aGVsbG8=" } })
    expect(created.json.stringData).toBeUndefined()
  })

  it("namespaces: Active with the kubernetes finalizer; deleting one deletes its content, then itself", async () => {
    const ns = await namespace(server)
    const got = await request(server, `/api/v1/namespaces/${ns}`)
    expect(got.json).toMatchObject({
      metadata: { labels: { "kubernetes.io/metadata.name": ns } },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" }
    })
    await create(ns, imagePullJob("job", {}, { finalizers: ["preheat.test/hold"] }))
    await create(ns, imagePullJob("free"))
    const deleting = await request(server, `/api/v1/namespaces/${ns}`, { method: "DELETE" })
    expect(deleting.json.status.phase).toBe("Terminating")
    expect(deleting.json.metadata.deletionTimestamp).toBeDefined()
    const refused = await request(server, ipjPath(ns), { method: "POST", body: imagePullJob("late") })
    expect(refused.status).toBe(403)
    expect(refused.json.message).toBe(
      `imagepulljobs.apps.kruise.io "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`
    )
    await eventually(
      "the job without finalizers deleted",
      async () => {
        expect((await request(server, ipjPath(ns, "free"))).status).toBe(404)
        return true
      },
      5_000,
      20
    )
    expect((await request(server, ipjPath(ns, "job"))).json.metadata.deletionTimestamp).toBeDefined()
    await request(server, ipjPath(ns, "job"), { method: "PATCH", contentType: mergePatch, body: { metadata: { finalizers: null } } })
    await eventually(
      "the namespace deleted",
      async () => {
        expect((await request(server, `/api/v1/namespaces/${ns}`)).status).toBe(404)
        return true
      },
      5_000,
      20
    )
    expect((await request(server, "/api/v1/namespaces/default", { method: "DELETE" })).status).toBe(403)
  })
})

describe("negotiation and authentication", () => {
  it("a client that accepts nothing we speak gets 406; YAML is spoken", async () => {
    expect((await request(server, "/api/v1/namespaces/default", { accept: "application/vnd.kubernetes.protobuf" })).status).toBe(406)
    const yaml = await request(server, "/api/v1/namespaces/default", { accept: "application/yaml" })
    expect(yaml.headers.get("content-type")).toBe("application/yaml")
    expect(yaml.text).toContain("name: default")
  })

  it("with a token, a request without it (or with another) is 401; health checks stay open", async () => {
    const guarded = await startServer({ token: "s3cret" })
    try {
      const anonymous = await request(guarded, "/api/v1/namespaces")
      expect(anonymous.status).toBe(401)
      expect(anonymous.json).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "Unauthorized",
        reason: "Unauthorized",
        code: 401
      })
      expect((await request(guarded, "/version", { token: "wrong" })).status).toBe(401)
      expect((await request(guarded, "/api/v1/namespaces", { token: "s3cret" })).status).toBe(200)
      expect((await request(guarded, "/readyz")).status).toBe(200)
    } finally {
      await guarded.close()
    }
  })
})
