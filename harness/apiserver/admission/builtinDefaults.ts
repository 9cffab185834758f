// What kube-apiserver's registry strategies do to the built-in kinds' bodies on a write, for the
// fields this server's users touch.
import type { ServedKind } from "../catalog.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { workloadDefaults } from "./workloadRules.ts"

type Body = Record<string, unknown>

// A Secret's stringData is write-only: merged into data (base64) and never stored; type defaults to Opaque.
const secret = (object: Body): Body => {
  const { stringData, ...rest } = object
  const data: Record<string, unknown> = isPlainObject(rest["data"]) ? { ...rest["data"] } : {}
  if (isPlainObject(stringData)) {
    for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(String(value), "utf8").toString("base64")
  }
  return {
    ...rest,
    ...(Object.keys(data).length > 0 || rest["data"] !== undefined ? { data } : {}),
    type: typeof rest["type"] === "string" && rest["type"] !== "" ? rest["type"] : "Opaque"
  }
}

// A namespace holds the `kubernetes` finalizer until its content is gone (namespaceLifecycle.ts).
const namespace = (object: Body, operation: string): Body => {
  if (operation !== "create") return object
  const spec = isPlainObject(object["spec"]) ? object["spec"] : {}
  return { ...object, spec: { ...spec, finalizers: spec["finalizers"] ?? ["kubernetes"] } }
}

export const builtinDefaults = (kind: ServedKind, object: Body, operation: "create" | "update" | "patch"): Body => {
  if (kind.group === "apps") return workloadDefaults(kind.resource.kind, object)
  if (kind.group !== "") return object
  switch (kind.resource.kind) {
    case "Secret":
      return secret(object)
    case "Namespace":
      return namespace(object, operation)
    default:
      return object
  }
}
