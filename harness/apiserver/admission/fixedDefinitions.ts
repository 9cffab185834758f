// The CustomResourceDefinitions are this server's own (servedDefinitions.ts): its custom kinds'
// schemas, admission and tables are built from them when it starts, so a definition cannot be
// added, changed or removed while it runs. Writing one unchanged is accepted (`kubectl apply -f
// deploy/crds/`, `kubectl replace`, `kubectl annotate`: metadata is free), a change is refused at
// the first field that differs, in kube-apiserver's words for a field that may not change.
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import type { Subresource } from "../../../src/kube/KubeApi.ts"
import { ApiFailure, invalidFailure } from "../http/apiStatus.ts"
import type { ServedKind } from "../catalog.ts"
import { customResourceDefinitions, qualifiedResource } from "../kindRules.ts"
import { servedSpecs } from "../servedDefinitions.ts"
import { quote } from "../storage/storeErrors.ts"

const isDefinitions = (kind: ServedKind): boolean => kind.resource === customResourceDefinitions

const forbidden = (name: string, why: string): ApiFailure =>
  new ApiFailure({
    code: 403,
    reason: "Forbidden",
    message: `${qualifiedResource(customResourceDefinitions)} ${quote(name)} is forbidden: ${why}`,
    details: { name, group: "apiextensions.k8s.io", kind: customResourceDefinitions.plural }
  })

// `spec.versions[1].schema.openAPIV3Schema.properties.spec`: where two JSON values first differ.
const firstDifference = (served: unknown, written: unknown, path: string): string | undefined => {
  if (Array.isArray(served) && Array.isArray(written)) {
    if (served.length !== written.length) return path
    for (let i = 0; i < served.length; i++) {
      const at = firstDifference(served[i], written[i], `${path}[${i}]`)
      if (at !== undefined) return at
    }
    return undefined
  }
  if (isPlainObject(served) && isPlainObject(written)) {
    for (const key of new Set([...Object.keys(served), ...Object.keys(written)])) {
      const at = firstDifference(served[key], written[key], `${path}.${key}`)
      if (at !== undefined) return at
    }
    return undefined
  }
  return served === written ? undefined : path
}

const servedNames = (): string => [...servedSpecs.keys()].join(", ")

/** Why a write of a CustomResourceDefinition is refused, if it is; undefined for every other kind. */
export const definitionWriteRefusal = (kind: ServedKind, object: JsonObject, subresource: Subresource): ApiFailure | undefined => {
  if (!isDefinitions(kind)) return undefined
  const metadata = isPlainObject(object["metadata"]) ? object["metadata"] : {}
  const name = typeof metadata["name"] === "string" ? metadata["name"] : ""
  const served = servedSpecs.get(name)
  if (served === undefined) {
    return forbidden(
      name,
      `this API server serves its own CustomResourceDefinitions only (${servedNames()}) and cannot add one while it runs`
    )
  }
  if (subresource === "status") return forbidden(name, "the status of a CustomResourceDefinition here is the API server's own")
  const field = firstDifference(served, object["spec"], "spec")
  if (field === undefined) return undefined
  return invalidFailure(kind, name, [
    {
      field,
      message:
        "Forbidden: this API server serves the definitions preheat was built with (`preheat crds`, deploy/crds/) and cannot change them while it runs"
    }
  ])
}

/** Why a CustomResourceDefinition cannot be deleted: it always is refused. */
export const definitionDeletionRefusal = (kind: ServedKind, name: string): ApiFailure | undefined =>
  isDefinitions(kind) ? forbidden(name, "this API server cannot remove a CustomResourceDefinition it serves while it runs") : undefined
