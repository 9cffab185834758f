// Both versions of the custom kinds over HTTP (issue 11): one storage, every read in the version
// asked for, as kube-apiserver serves CRD versions with conversion None.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { namespace, request, startServer, unique, watch } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"
import { rawControls, titleEscapeReference } from "../../support/hostileText.ts"

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server.close()
})

const group = "apps.kruise.io"
const jobs = (version: string, ns: string, name = "") =>
  `/apis/${group}/${version}/namespaces/${ns}/imagepulljobs${name === "" ? "" : `/${name}`}`
const job = (version: string, name: string, image = "nginx:1.9.1") => ({
  apiVersion: `${group}/${version}`,
  kind: "ImagePullJob",
  metadata: { name },
  spec: { image }
})
const mergePatch = "application/merge-patch+json"

describe("apps.kruise.io v1alpha1 and v1beta1", () => {
  it("an object written in one version is read, listed and updated in the other, apiVersion rewritten", async () => {
    const ns = await namespace(server)
    const created = await request(server, jobs("v1beta1", ns), { method: "POST", body: job("v1beta1", "j") })
    expect(created.status).toBe(201)
    expect(created.json.apiVersion).toBe("apps.kruise.io/v1beta1")

    const alpha = await request(server, jobs("v1alpha1", ns, "j"))
    expect(alpha.json.apiVersion).toBe("apps.kruise.io/v1alpha1")
    expect({ ...alpha.json, apiVersion: undefined }).toEqual({ ...created.json, apiVersion: undefined })

    const listed = await request(server, jobs("v1alpha1", ns))
    expect(listed.json.apiVersion).toBe("apps.kruise.io/v1alpha1")
    expect(listed.json.items.map((i: { apiVersion: string }) => i.apiVersion)).toEqual(["apps.kruise.io/v1alpha1"])

    // Writing back what was read through the other version changes nothing: same resourceVersion.
    const unchanged = await request(server, jobs("v1alpha1", ns, "j"), { method: "PUT", body: alpha.json })
    expect(unchanged.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion)
    const patched = await request(server, jobs("v1alpha1", ns, "j"), {
      method: "PATCH",
      contentType: mergePatch,
      body: { spec: { parallelism: 3 } }
    })
    expect(patched.json).toMatchObject({ apiVersion: "apps.kruise.io/v1alpha1", metadata: { generation: 2 } })
    expect((await request(server, jobs("v1beta1", ns, "j"))).json.spec.parallelism).toBe(3)
  })

  it("the deprecated spec.pullPolicy.type (issue 26) is kept through either version", async () => {
    const ns = await namespace(server)
    const body = { ...job("v1alpha1", "seed", "nginx:latest"), spec: { image: "nginx:latest", pullPolicy: { type: "Always" } } }
    expect((await request(server, jobs("v1alpha1", ns), { method: "POST", body })).status).toBe(201)
    const beta = await request(server, jobs("v1beta1", ns, "seed"))
    expect(beta.json.spec.pullPolicy).toEqual({ type: "Always", timeoutSeconds: 600, backoffLimit: 3 })
    const written = await request(server, jobs("v1beta1", ns, "seed"), { method: "PUT", body: beta.json })
    expect(written.json.metadata.resourceVersion).toBe(beta.json.metadata.resourceVersion)
    expect((await request(server, jobs("v1alpha1", ns, "seed"))).json.spec.pullPolicy.type).toBe("Always")
  })

  it("a watch in one version sees writes made in the other, in its own version", async () => {
    const ns = await namespace(server)
    const start = await request(server, jobs("v1alpha1", ns))
    const stream = await watch(server, `${jobs("v1alpha1", ns)}?watch=1&resourceVersion=${start.json.metadata.resourceVersion}`)
    try {
      await request(server, jobs("v1beta1", ns), { method: "POST", body: job("v1beta1", "w") })
      await request(server, jobs("v1beta1", ns, "w"), { method: "DELETE" })
      const events = [await stream.next(), await stream.next()]
      expect(events.map((e) => `${e?.type} ${e?.object.apiVersion}`)).toEqual([
        "ADDED apps.kruise.io/v1alpha1",
        "DELETED apps.kruise.io/v1alpha1"
      ])
    } finally {
      stream.close()
    }
  })

  it("a body's apiVersion must be the path's, as kube-apiserver requires", async () => {
    const ns = await namespace(server)
    const answer = await request(server, jobs("v1beta1", ns), { method: "POST", body: job("v1alpha1", "mismatch") })
    expect(answer.status).toBe(400)
    expect(answer.json.message).toContain("does not match the expected API version (apps.kruise.io/v1beta1)")
  })

  it("a hostile apiVersion comes back escaped (issue 24)", async () => {
    const ns = await namespace(server)
    const answer = await request(server, jobs("v1beta1", ns), {
      method: "POST",
      body: { ...job("v1alpha1", "hostile"), apiVersion: titleEscapeReference }
    })
    expect(answer.status).toBe(400)
    expect(answer.json.message).toContain("the API version in the data (nginx\\x1b]0;pwned\\a\\u202e:latest) does not match")
    expect(rawControls(answer.json.message)).toEqual([])
  })

  it("NodeImage pullSecrets[].mode, a v1beta1 field, is pruned from what v1alpha1 reads, kept in storage", async () => {
    const name = unique("node")
    const body = {
      apiVersion: `${group}/v1beta1`,
      kind: "NodeImage",
      metadata: { name },
      spec: { images: { nginx: { pullSecrets: [{ namespace: "ns", name: "s", mode: "batch" }], tags: [{ tag: "1.9.1" }] } } }
    }
    expect((await request(server, `/apis/${group}/v1beta1/nodeimages`, { method: "POST", body })).status).toBe(201)
    const secretsIn = async (version: string) =>
      (await request(server, `/apis/${group}/${version}/nodeimages/${name}`)).json.spec.images.nginx.pullSecrets
    expect(await secretsIn("v1alpha1")).toEqual([{ namespace: "ns", name: "s" }])
    expect(await secretsIn("v1beta1")).toEqual([{ namespace: "ns", name: "s", mode: "batch" }])
    // Written through v1alpha1 (Warn, the default), the field is pruned with a warning.
    const alpha = await request(server, `/apis/${group}/v1alpha1/nodeimages`, {
      method: "POST",
      body: { ...body, apiVersion: `${group}/v1alpha1`, metadata: { name: unique("node") } }
    })
    expect(alpha.headers.get("warning")).toContain("spec.images[nginx].pullSecrets[0].mode")
    // A patch through v1alpha1 that leaves the pull secrets alone still writes them as v1alpha1
    // has them (conversion None, as kube-apiserver): the v1beta1 field is gone from storage.
    const patched = await request(server, `/apis/${group}/v1alpha1/nodeimages/${name}`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: { metadata: { labels: { patched: "yes" } } }
    })
    expect(patched.status).toBe(200)
    expect(await secretsIn("v1beta1")).toEqual([{ namespace: "ns", name: "s" }])
  })

  // Issue 26: upstream's v1alpha1 lacks the template, so conversion None drops it there; preheat keeps one schema.
  it("AdvancedCronJob: both versions, stored as v1beta1, its ImageListPullJob template kept through either", async () => {
    const ns = await namespace(server)
    const cronJobs = (version: string, name = "") =>
      `/apis/${group}/${version}/namespaces/${ns}/advancedcronjobs${name === "" ? "" : `/${name}`}`
    const template = { imageListPullJobTemplate: { spec: { images: ["nginx:1.25.3", "redis:7.0"], parallelism: 5 } } }
    const created = await request(server, cronJobs("v1alpha1"), {
      method: "POST",
      body: {
        apiVersion: `${group}/v1alpha1`,
        kind: "AdvancedCronJob",
        metadata: { name: "nightly" },
        spec: { schedule: "0 2 * * *", template }
      }
    })
    expect(created.status).toBe(201)
    const beta = await request(server, cronJobs("v1beta1", "nightly"))
    expect(beta.json.apiVersion).toBe("apps.kruise.io/v1beta1")
    expect({ ...beta.json, apiVersion: undefined }).toEqual({ ...created.json, apiVersion: undefined })
    expect(beta.json.spec.template.imageListPullJobTemplate.spec.images).toEqual(["nginx:1.25.3", "redis:7.0"])
    // Written back through v1alpha1, as kubectl edit of the old version does: nothing lost.
    const patched = await request(server, cronJobs("v1alpha1", "nightly"), {
      method: "PATCH",
      contentType: mergePatch,
      body: { spec: { paused: true } }
    })
    expect(patched.status).toBe(200)
    const after = await request(server, cronJobs("v1beta1", "nightly"))
    expect(after.json.spec).toMatchObject({ paused: true, template })
  })
})
