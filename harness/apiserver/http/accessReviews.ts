// authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview, answered as a
// kube-apiserver with the AlwaysAllow authorizer answers them (this server has no RBAC): every
// action is allowed. `kubectl auth can-i` and `kubectl auth can-i --list` ask these; tools that
// check their permissions before acting (Helm, Argo CD, operators) too. Create-only, never stored.
import { Effect } from "effect"
import { ApiFailure, badRequest, methodNotAllowed } from "./apiStatus.ts"
import { objectBody } from "./objectContext.ts"
import type { ApiRequest } from "./apiRequest.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { jsonReply } from "./reply.ts"
import type { Reply } from "./reply.ts"

export const authorizationGroup = "authorization.k8s.io"
export const authorizationVersion = "v1"

/** What discovery lists for each review: a cluster-scoped resource with the create verb only. */
export interface ReviewResource {
  readonly plural: string
  readonly singular: string
  readonly kind: string
}

export const reviewResources: ReadonlyArray<ReviewResource> = [
  { plural: "selfsubjectaccessreviews", singular: "selfsubjectaccessreview", kind: "SelfSubjectAccessReview" },
  { plural: "selfsubjectrulesreviews", singular: "selfsubjectrulesreview", kind: "SelfSubjectRulesReview" }
]

export const findReview = (plural: string): ReviewResource | undefined => reviewResources.find((r) => r.plural === plural)

const apiVersion = `${authorizationGroup}/${authorizationVersion}`

const invalid = (kind: string, field: string, message: string): ApiFailure =>
  new ApiFailure({
    code: 422,
    reason: "Invalid",
    message: `${kind}.${authorizationGroup} "" is invalid: ${field}: ${message}`,
    details: { name: "", group: authorizationGroup, kind, causes: [{ reason: "FieldValueInvalid", message, field }] }
  })

// The AlwaysAllow authorizer's rules: everything, on every resource and every non-resource URL.
const allRules = {
  resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
  nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
  incomplete: false
}

/** POST of a review: the review back with its status, 201 as kube-apiserver answers a create. */
export const answerReview = (review: ReviewResource, request: ApiRequest): Effect.Effect<Reply, ApiFailure> =>
  Effect.gen(function* () {
    if (request.method !== "POST") return yield* Effect.fail(methodNotAllowed(request.method))
    const body = yield* objectBody(request)
    if ((body["apiVersion"] ?? apiVersion) !== apiVersion || (body["kind"] ?? review.kind) !== review.kind) {
      const given = `${String(body["apiVersion"])}/${String(body["kind"])}`
      return yield* Effect.fail(badRequest(`the body is a ${given}, not a ${apiVersion}/${review.kind}`))
    }
    const spec = isPlainObject(body["spec"]) ? body["spec"] : {}
    let status: Record<string, unknown>
    if (review.kind === "SelfSubjectAccessReview") {
      const attributes = [spec["resourceAttributes"], spec["nonResourceAttributes"]].filter(isPlainObject)
      if (attributes.length !== 1) {
        const message = 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified'
        return yield* Effect.fail(invalid(review.kind, "spec.resourceAttributes", message))
      }
      status = { allowed: true }
    } else {
      if (typeof spec["namespace"] !== "string" || spec["namespace"] === "") {
        return yield* Effect.fail(badRequest("no namespace on request"))
      }
      status = allRules
    }
    return jsonReply(201, { kind: review.kind, apiVersion, metadata: { creationTimestamp: null }, spec, status })
  })
