// How an HTTP error answer becomes a typed KubeError: 401 and 403 told apart, and a 403 naming the
// RBAC rule to grant in deploy/rbac.yaml's terms.
import { assert, describe, it } from "@effect/vitest"
import { isAccessProblem, Unavailable } from "../../../../src/kube/errors.ts"
import { kubeErrorOf, narrowTo, type RequestTarget } from "../../../../layers/kube/live/statusErrors.ts"
import { resources } from "../../../../src/kube/resources.ts"

const status = (code: number, reason: string, message: string) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  reason,
  message
})

const listJobs: RequestTarget = { verb: "list", resource: resources.imagePullJob, name: "", namespace: "apps" }

describe("kubeErrorOf", () => {
  it("a 401 is Unauthorized, with the server's words and never a token", () => {
    const error = kubeErrorOf(401, status(401, "Unauthorized", "Unauthorized for Bearer abc.def"), listJobs)
    assert.strictEqual(error._tag, "Unauthorized")
    if (error._tag !== "Unauthorized") return
    assert.strictEqual(error.verb, "list")
    assert.strictEqual(error.reason, "Unauthorized for Bearer [redacted]")
    assert.strictEqual(error.message, "list ImagePullJob: 401 Unauthorized: Unauthorized for Bearer [redacted]")
    assert.isTrue(isAccessProblem(error))
  })

  it("a 401 whose server said only Unauthorized says it once", () => {
    const error = kubeErrorOf(401, status(401, "Unauthorized", "Unauthorized"), {
      verb: "get",
      resource: resources.secret,
      name: "regcred",
      namespace: "apps"
    })
    assert.strictEqual(error.message, "get Secret apps/regcred: 401 Unauthorized")
  })

  it("a 403 is Forbidden, naming the rule: verb, group, resource and namespace", () => {
    const server = 'imagepulljobs.apps.kruise.io is forbidden: User "system:serviceaccount:x:y" cannot list resource "imagepulljobs"'
    const error = kubeErrorOf(403, status(403, "Forbidden", server), listJobs)
    assert.strictEqual(error._tag, "Forbidden")
    assert.strictEqual(
      error.message,
      'forbidden: list imagepulljobs.apps.kruise.io in namespace "apps" (verb=list, group=apps.kruise.io, resource=imagepulljobs): ' +
        `grant it in deploy/rbac.yaml or your RoleBinding: ${server}`
    )
  })

  it("a 403 on a status write names the subresource; cluster-wide kinds a ClusterRoleBinding", () => {
    const error = kubeErrorOf(403, status(403, "Forbidden", "no"), {
      verb: "patch",
      resource: resources.nodeImage,
      name: "node-1",
      subresource: "status"
    })
    assert.strictEqual(
      error.message,
      'forbidden: patch nodeimages.apps.kruise.io/status "node-1" cluster-wide (verb=patch, group=apps.kruise.io, resource=nodeimages/status): ' +
        "grant it in deploy/rbac.yaml or your ClusterRoleBinding: no"
    )
  })

  it('a 403 on the core group says group ""; a list in all namespaces is cluster-wide', () => {
    const error = kubeErrorOf(403, status(403, "Forbidden", "no"), { verb: "watch", resource: resources.secret, name: "" })
    assert.strictEqual(
      error.message,
      'forbidden: watch secrets cluster-wide (verb=watch, group="", resource=secrets): grant it in deploy/rbac.yaml or your ClusterRoleBinding: no'
    )
  })

  it("every verb may be Unauthorized, whatever else narrowTo allows", () => {
    const asRead = narrowTo(["NotFound"])
    const unauthorized = kubeErrorOf(401, undefined, listJobs)
    assert.strictEqual(asRead(unauthorized, listJobs)._tag, "Unauthorized")
    assert.strictEqual(asRead(kubeErrorOf(409, undefined, listJobs), listJobs)._tag, "Unavailable")
  })

  it("a 5xx is Unavailable and no access problem; a connection failure is", () => {
    const error = kubeErrorOf(503, status(503, "ServiceUnavailable", "etcd"), listJobs)
    assert.strictEqual(error._tag, "Unavailable")
    assert.isFalse(isAccessProblem(error))
    assert.isTrue(
      isAccessProblem(new Unavailable({ message: "x", connection: { _tag: "Unreachable", reason: "ECONNREFUSED", code: "ECONNREFUSED" } }))
    )
  })
})
