// An object as a client of one version reads it. The custom kinds' versions convert with None, so
// kube-apiserver rewrites apiVersion and then prunes with the requested version's schema: a field
// only a newer version declares (NodeImage pullSecrets[].mode, v1beta1) is absent from the older
// version's view. Only those fields are looked for, so reading a kind whose versions have the
// same schema costs a shallow copy, once per stored object.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import type { Resource } from "../../../src/kube/resources.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { servedKinds } from "../catalog.ts"
import type { ServedKind } from "../catalog.ts"
import type { StructuralSchema } from "../admission/structuralSchema.ts"

/** One step of a schema path: a property, every value of a map, every item of a list. */
type Step = { readonly property: string } | "values" | "items"
type Path = ReadonlyArray<Step>

/** The paths of the fields `other` declares and `schema` does not, outermost only. */
const missingFields = (schema: StructuralSchema, other: StructuralSchema, at: Path = []): Array<Path> => {
  const out: Array<Path> = []
  for (const [name, child] of Object.entries(other.properties ?? {})) {
    const own = schema.properties?.[name]
    const path = [...at, { property: name }]
    if (own === undefined) out.push(path)
    else out.push(...missingFields(own, child, path))
  }
  if (typeof other.additionalProperties === "object" && typeof schema.additionalProperties === "object") {
    out.push(...missingFields(schema.additionalProperties, other.additionalProperties, [...at, "values"]))
  }
  if (other.items !== undefined && schema.items !== undefined) out.push(...missingFields(schema.items, other.items, [...at, "items"]))
  return out
}

const key = (resource: Resource): string => `${resource.apiVersion}/${resource.kind}`

/** The fields other versions of the kind declare and this one does not. */
const missingIn = (own: ServedKind): ReadonlyArray<Path> => {
  const schema = own.structural
  if (schema === undefined) return []
  return servedKinds
    .filter((k) => k.group === own.group && k.resource.kind === own.resource.kind)
    .flatMap((other) => (other === own || other.structural === undefined ? [] : missingFields(schema, other.structural)))
}

// Computed once with the catalog: the kinds and their schemas are fixed.
const pathsByVersion: ReadonlyMap<string, ReadonlyArray<Path>> = new Map(servedKinds.map((k) => [key(k.resource), missingIn(k)]))

/** The value without the field at `path`; the same value when there is none (copy on write). */
const strip = (value: unknown, path: Path): unknown => {
  const [step, ...rest] = path
  if (step === undefined) return value
  if (step === "items") {
    if (!Array.isArray(value)) return value
    const next = value.map((item) => strip(item, rest))
    return next.every((item, i) => item === value[i]) ? value : Object.freeze(next)
  }
  if (!isPlainObject(value)) return value
  if (step === "values") {
    let changed = false
    const next = Object.fromEntries(
      Object.entries(value).map(([k, v]) => {
        const stripped = strip(v, rest)
        if (stripped !== v) changed = true
        return [k, stripped]
      })
    )
    return changed ? Object.freeze(next) : value
  }
  if (!(step.property in value)) return value
  if (rest.length === 0) {
    const { [step.property]: _, ...others } = value
    return Object.freeze(others)
  }
  const child = strip(value[step.property], rest)
  return child === value[step.property] ? value : Object.freeze({ ...value, [step.property]: child })
}

/**
 * How stored objects read through a resource's version (see the module comment), for one store:
 * one view per stored object, so readers of the other version share it as they share the object.
 */
export const servedViews = (): ((resource: Resource, object: KubeObject) => KubeObject) => {
  const views = new WeakMap<KubeObject, KubeObject>()
  return (resource, object) => {
    if (object.apiVersion === resource.apiVersion) return object
    const cached = views.get(object)
    if (cached?.apiVersion === resource.apiVersion) return cached
    const paths = pathsByVersion.get(key(resource)) ?? []
    const pruned = paths.reduce<unknown>((v, path) => strip(v, path), object) as KubeObject
    const view: KubeObject = Object.freeze({ ...pruned, apiVersion: resource.apiVersion })
    views.set(object, view)
    return view
  }
}
