// The store reports errors as kube-apiserver words them, as the KubeApi's typed errors.
import { Conflict, Invalid } from "../../src/kube/errors.ts"
import type { Resource } from "../../src/kube/resources.ts"
import { qualifiedResource } from "../kindRules.ts"

/** One field's problem: `field` is the path, `message` e.g. `Invalid value: "x": why`. */
export interface Cause {
  readonly field: string
  readonly message: string
}

export const target = (resource: Resource, name: string, namespace: string | undefined) =>
  namespace === undefined ? { kind: resource.kind, objectName: name } : { kind: resource.kind, objectName: name, namespace }

/** Go's %q for the values quoted in messages (JSON is close enough for every value we quote). */
export const quote = (u: unknown): string => {
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
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
