// `kubectl auth can-i` against the embedded API server: it has no RBAC, so it answers as a
// kube-apiserver with the AlwaysAllow authorizer, through discoverable SelfSubjectAccessReview and
// SelfSubjectRulesReview (authorization.k8s.io/v1), which kubectl sends as protobuf.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { request, startServer } from "./serverHarness.ts"
import type { RunningServer } from "./serverHarness.ts"
import { hasKubectl, kubectlFor, kubectlPath } from "./kubectlClient.ts"

if (!hasKubectl) console.warn(`SKIPPED: the kubectl auth tests need ${kubectlPath}, which is not installed here`)

let server: RunningServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

describe("access reviews", () => {
  it("are discoverable: authorization.k8s.io/v1 with the create verb only", async () => {
    const list = await request(server, "/apis/authorization.k8s.io/v1")
    expect(list.json.resources.map((r: { name: string; verbs: Array<string> }) => [r.name, r.verbs])).toEqual([
      ["selfsubjectaccessreviews", ["create"]],
      ["selfsubjectrulesreviews", ["create"]]
    ])
    const groups = await request(server, "/apis")
    expect(groups.json.groups.map((g: { name: string }) => g.name)).toContain("authorization.k8s.io")
  })

  it("allow everything; a review without attributes is 422, other verbs 405", async () => {
    const review = await request(server, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      method: "POST",
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: { verb: "delete", resource: "nodes" } }
      }
    })
    expect(review.status).toBe(201)
    expect(review.json).toMatchObject({ kind: "SelfSubjectAccessReview", status: { allowed: true } })
    const empty = await request(server, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { method: "POST", body: { spec: {} } })
    expect(empty.json).toMatchObject({
      code: 422,
      reason: "Invalid",
      message: expect.stringContaining("exactly one of nonResourceAttributes or resourceAttributes")
    })
    expect((await request(server, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")).status).toBe(405)
  })
})

describe.skipIf(!hasKubectl)("kubectl auth can-i", () => {
  it("says yes, for resources, subresources and non-resource URLs", async () => {
    const kubectl = kubectlFor(server)
    for (const args of [
      ["create", "imagepulljobs.apps.kruise.io"],
      ["delete", "nodes"],
      ["patch", "nodeimages", "--subresource=status"],
      ["get", "/healthz"]
    ]) {
      expect(await kubectl(["auth", "can-i", ...args]), args.join(" ")).toMatchObject({ code: 0, stdout: "yes\n" })
    }
  })

  it("--list shows every verb on every resource", async () => {
    const kubectl = kubectlFor(server)
    const listed = await kubectl(["auth", "can-i", "--list", "-n", "default"])
    expect(listed.stderr).toBe("")
    expect(listed.code).toBe(0)
    const rows = listed.stdout
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/))
    expect(rows).toEqual([
      ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"],
      ["*.*", "[]", "[]", "[*]"],
      ["[*]", "[]", "[*]"]
    ])
  })
})
