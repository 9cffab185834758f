import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { aggregatedDiscoveryType } from "../../../harness/apiserver/http/negotiation.ts"
import { request, startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const aggregatedAccept = `${aggregatedDiscoveryType},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`

describe("discovery", () => {
  it("/version reports Kubernetes 1.32, which kubectl's dispatcher picks its minor from", async () => {
    const { status, json } = await request(server, "/version")
    expect(status).toBe(200)
    expect(json).toMatchObject({ major: "1", minor: "32" })
    expect(json.gitVersion).toMatch(/^v1\.32\.\d+/)
  })

  it("/api and /apis answer the legacy lists by default", async () => {
    const api = await request(server, "/api")
    expect(api.json).toEqual({
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: `127.0.0.1:${server.port}` }]
    })
    const apis = await request(server, "/apis")
    expect(apis.json.kind).toBe("APIGroupList")
    expect(apis.json.groups.map((g: { name: string }) => g.name)).toEqual([
      "apps",
      "apiextensions.k8s.io",
      "coordination.k8s.io",
      "apps.kruise.io",
      "authorization.k8s.io"
    ])
    expect(apis.json.groups[3]).toEqual({
      name: "apps.kruise.io",
      // Both of upstream's versions; the newest preferred, as kube-apiserver sorts CRD versions.
      versions: [
        { groupVersion: "apps.kruise.io/v1beta1", version: "v1beta1" },
        { groupVersion: "apps.kruise.io/v1alpha1", version: "v1alpha1" }
      ],
      preferredVersion: { groupVersion: "apps.kruise.io/v1beta1", version: "v1beta1" }
    })
    expect((await request(server, "/apis/apps.kruise.io")).json).toMatchObject({ kind: "APIGroup", name: "apps.kruise.io" })
  })

  it("per group version: resources with verbs, short names, categories, scope and subresources", async () => {
    const { json } = await request(server, "/apis/apps.kruise.io/v1alpha1")
    expect(json.kind).toBe("APIResourceList")
    expect(json.groupVersion).toBe("apps.kruise.io/v1alpha1")
    const byName = Object.fromEntries(json.resources.map((r: { name: string }) => [r.name, r]))
    expect(byName["imagepulljobs"]).toEqual({
      name: "imagepulljobs",
      singularName: "imagepulljob",
      namespaced: true,
      kind: "ImagePullJob",
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      shortNames: ["ipj"],
      categories: ["preheat"]
    })
    expect(byName["imagelistpulljobs"].shortNames).toEqual(["iplj"])
    expect(byName["nodeimages"]).toMatchObject({ namespaced: false, shortNames: ["ni"] })
    expect(byName["nodeimages/status"]).toMatchObject({ kind: "NodeImage", verbs: ["get", "patch", "update"] })

    const core = await request(server, "/api/v1")
    const names = core.json.resources.map((r: { name: string }) => r.name)
    for (const name of ["namespaces", "nodes", "pods", "secrets", "events", "pods/status", "nodes/status", "namespaces/finalize"]) {
      expect(names).toContain(name)
    }
    const leases = await request(server, "/apis/coordination.k8s.io/v1")
    expect(leases.json.resources).toEqual([expect.objectContaining({ name: "leases", kind: "Lease", namespaced: true })])
    expect((await request(server, "/apis/apps.kruise.io/v1")).status).toBe(404)
    const beta = await request(server, "/apis/apps.kruise.io/v1beta1")
    // Every kind in both versions, AdvancedCronJob too, as upstream serves them.
    expect(beta.json.resources.map((r: { name: string }) => r.name)).toEqual(json.resources.map((r: { name: string }) => r.name))
    expect(beta.json.resources.map((r: { name: string }) => r.name)).toContain("advancedcronjobs")
  })

  it("aggregated discovery (apidiscovery.k8s.io/v2) when the Accept header asks for it", async () => {
    const apis = await request(server, "/apis", { accept: aggregatedAccept })
    expect(apis.headers.get("content-type")).toBe(aggregatedDiscoveryType)
    expect(apis.json).toMatchObject({ kind: "APIGroupDiscoveryList", apiVersion: "apidiscovery.k8s.io/v2" })
    const kruise = apis.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === "apps.kruise.io")
    expect(kruise.versions.map((v: { version: string }) => v.version)).toEqual(["v1beta1", "v1alpha1"])
    const ipj = kruise.versions[1].resources.find((r: { resource: string }) => r.resource === "imagepulljobs")
    expect(kruise.versions[1]).toMatchObject({ version: "v1alpha1", freshness: "Current" })
    expect(ipj).toEqual({
      resource: "imagepulljobs",
      responseKind: { group: "apps.kruise.io", version: "v1alpha1", kind: "ImagePullJob" },
      scope: "Namespaced",
      singularResource: "imagepulljob",
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      shortNames: ["ipj"],
      categories: ["preheat"],
      subresources: [
        {
          subresource: "status",
          responseKind: { group: "apps.kruise.io", version: "v1alpha1", kind: "ImagePullJob" },
          verbs: ["get", "patch", "update"]
        }
      ]
    })
    const api = await request(server, "/api", { accept: aggregatedAccept })
    expect(api.json.items).toHaveLength(1)
    const pods = api.json.items[0].versions[0].resources.find((r: { resource: string }) => r.resource === "pods")
    expect(pods).toMatchObject({ scope: "Namespaced", shortNames: ["po"], categories: ["all"] })
  })

  it("unknown paths are 404 Status objects; discovery is read-only", async () => {
    const missing = await request(server, "/apis/apps.kruise.io/v1alpha1/namespaces/default/widgets")
    expect(missing.status).toBe(404)
    expect(missing.json).toMatchObject({ kind: "Status", status: "Failure", reason: "NotFound", code: 404 })
    expect((await request(server, "/apis", { method: "POST", body: {} })).status).toBe(405)
    expect((await request(server, "/healthz")).text).toBe("ok")
  })
})

describe("OpenAPI v3", () => {
  it("the root lists one document per group version, addressed by hash", async () => {
    const { json } = await request(server, "/openapi/v3")
    expect(Object.keys(json.paths).sort()).toEqual([
      "api/v1",
      "apis/apiextensions.k8s.io/v1",
      "apis/apps.kruise.io/v1alpha1",
      "apis/apps.kruise.io/v1beta1",
      "apis/apps/v1",
      "apis/coordination.k8s.io/v1"
    ])
    expect(json.paths["apis/apps.kruise.io/v1alpha1"].serverRelativeURL).toMatch(
      /^\/openapi\/v3\/apis\/apps\.kruise\.io\/v1alpha1\?hash=[0-9A-F]{128}$/
    )
  })

  it("a document has, per kind, a patch on .../{name} with its group-version-kind and fieldValidation", async () => {
    const root = await request(server, "/openapi/v3")
    const url = root.json.paths["apis/apps.kruise.io/v1alpha1"].serverRelativeURL as string
    const document = await request(server, url)
    expect(document.headers.get("cache-control")).toBe("public, immutable")
    const item = document.json.paths["/apis/apps.kruise.io/v1alpha1/namespaces/{namespace}/imagepulljobs/{name}"]
    expect(item.patch["x-kubernetes-group-version-kind"]).toEqual({ group: "apps.kruise.io", version: "v1alpha1", kind: "ImagePullJob" })
    expect(item.patch.parameters.map((p: { name: string }) => p.name)).toContain("fieldValidation")
    // Custom resources take no strategic merge patch: kubectl apply then sends a merge patch.
    expect(Object.keys(item.patch.requestBody.content)).toEqual(["application/json-patch+json", "application/merge-patch+json"])
    const schema = document.json.components.schemas["io.kruise.apps.v1alpha1.ImagePullJob"]
    expect(schema["x-kubernetes-group-version-kind"]).toEqual([{ group: "apps.kruise.io", kind: "ImagePullJob", version: "v1alpha1" }])
    expect(schema.properties.spec.required).toEqual(["image"])
    expect(document.json.paths["/apis/apps.kruise.io/v1alpha1/nodeimages/{name}/status"].patch).toBeDefined()
  })

  it("the v1beta1 document names its own kinds; NodeImage pull secrets have mode there only", async () => {
    const root = await request(server, "/openapi/v3")
    const document = async (version: string) =>
      (await request(server, root.json.paths[`apis/apps.kruise.io/${version}`].serverRelativeURL as string)).json
    const beta = await document("v1beta1")
    const alpha = await document("v1alpha1")
    expect(beta.components.schemas["io.kruise.apps.v1beta1.ImagePullJob"]["x-kubernetes-group-version-kind"]).toEqual([
      { group: "apps.kruise.io", kind: "ImagePullJob", version: "v1beta1" }
    ])
    const secretFields = (doc: { components: { schemas: Record<string, any> } }, version: string) =>
      Object.keys(
        doc.components.schemas[`io.kruise.apps.${version}.NodeImage`].properties.spec.properties.images.additionalProperties.properties
          .pullSecrets.items.properties
      ).sort()
    expect(secretFields(beta, "v1beta1")).toEqual(["mode", "name", "namespace"])
    expect(secretFields(alpha, "v1alpha1")).toEqual(["name", "namespace"])
  })

  it("the core document describes the built-in kinds", async () => {
    const root = await request(server, "/openapi/v3")
    const document = await request(server, root.json.paths["api/v1"].serverRelativeURL)
    const pod = document.json.paths["/api/v1/namespaces/{namespace}/pods/{name}"]
    expect(pod.patch["x-kubernetes-group-version-kind"]).toEqual({ group: "", version: "v1", kind: "Pod" })
    expect(document.json.components.schemas["io.k8s.api.core.v1.Secret"]["x-kubernetes-group-version-kind"]).toEqual([
      { group: "", kind: "Secret", version: "v1" }
    ])
    expect((await request(server, "/openapi/v3/apis/nothing/v1")).status).toBe(404)
  })
})
