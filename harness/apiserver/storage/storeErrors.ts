// The store reports errors as kube-apiserver words them, as the KubeApi's typed errors.
import { escapeForeignText, maxForeignCharacters, quoteBounded } from "../../../src/api/goQuote.ts"
import { Conflict, Invalid } from "../../../src/kube/errors.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { qualifiedResource } from "../kindRules.ts"

/** One field's problem: `field` is the path, `message` e.g. `Invalid value: "x": why`. */
export interface Cause {
  readonly field: string
  readonly message: string
}

export const target = (resource: Resource, name: string, namespace: string | undefined) =>
  namespace === undefined ? { kind: resource.kind, objectName: name } : { kind: resource.kind, objectName: name, namespace }

/**
 * A value in a message as apimachinery's field errors print it: a string by Go's %q, anything else
 * as JSON (json.Marshal), with what a terminal would act on escaped. Both are cut after
 * maxForeignCharacters: room for any name, label key or value Kubernetes accepts, while a 5,000-character
 * value is not echoed whole.
 */
export const quote = (u: unknown): string => {
  if (typeof u === "string") return quoteBounded(u, maxForeignCharacters)
  try {
    return escapeForeignText(JSON.stringify(u) ?? String(u))
  } catch {
    return escapeForeignText(String(u))
  }
}

export const invalid = (resource: Resource, name: string, namespace: string | undefined, causes: ReadonlyArray<Cause>) =>
  new Invalid({ ...target(resource, name, namespace), causes })

export const conflict = (resource: Resource, name: string, namespace: string | undefined, why: string) =>
  new Conflict({
    ...target(resource, name, namespace),
    message: `Operation cannot be fulfilled on ${qualifiedResource(resource)} ${quote(name)}: ${why}`
  })

export const modified = "the object has been modified; please apply your changes to the latest version and try again"

export const uidPrecondition = (given: string, actual: string | undefined): string =>
  `Precondition failed: UID in precondition: ${given}, UID in object meta: ${actual ?? ""}`

export const versionPrecondition = (given: string, actual: string | undefined): string =>
  `Precondition failed: ResourceVersion in precondition: ${given}, ResourceVersion in object meta: ${actual ?? ""}`
