import { SchemaAST } from "effect"
import { apiVersions, openApiKey, servedFromKey } from "../schemaExtras.ts"
import type { ApiVersionName, OpenApiExtras } from "../schemaExtras.ts"

/** A node of a CRD's structural OpenAPI v3 schema. */
export type OpenApiSchema = { readonly [key: string]: unknown }

class UnsupportedSchema extends Error {
  constructor(what: string, path: string) {
    super(`cannot express ${what} at ${path === "" ? "the root" : path} in a structural CRD schema`)
  }
}

interface Representation {
  readonly id: string
  readonly payload?: Record<string, unknown> | null
}

/** Annotations of a node and of its checks: Schema puts those given after a check on the check. */
const annotationsOf = (ast: SchemaAST.AST): Record<string, unknown> =>
  Object.assign({}, ast.annotations, ...(ast.checks ?? []).map((check) => check.annotations ?? {}))

const representations = (ast: SchemaAST.AST): ReadonlyArray<Representation> =>
  (ast.checks ?? []).flatMap((check) => {
    const representation = check.annotations?.["representation"] as Representation | undefined
    return representation === undefined ? [] : [representation]
  })

/** Schema's built-in checks, as the OpenAPI keywords the API server enforces itself. */
const constraints = (ast: SchemaAST.AST, kind: "string" | "number" | "array" | "object"): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  const length = kind === "array" ? "Items" : kind === "object" ? "Properties" : "Length"
  for (const { id, payload } of representations(ast)) {
    const p = payload ?? {}
    switch (id) {
      case "effect/schema/isInt":
        out["type"] = "integer"
        break
      case "effect/schema/isGreaterThanOrEqualTo":
        out["minimum"] = p["minimum"]
        break
      case "effect/schema/isLessThanOrEqualTo":
        out["maximum"] = p["maximum"]
        break
      case "effect/schema/isGreaterThan":
        out["minimum"] = p["exclusiveMinimum"]
        out["exclusiveMinimum"] = true
        break
      case "effect/schema/isBetween":
        out["minimum"] = p["minimum"]
        out["maximum"] = p["maximum"]
        if (p["exclusiveMinimum"] === true) out["exclusiveMinimum"] = true
        if (p["exclusiveMaximum"] === true) out["exclusiveMaximum"] = true
        break
      case "effect/schema/isMinLength":
        out[`min${length}`] = p["minLength"]
        break
      case "effect/schema/isMaxLength":
        out[`max${length}`] = p["maxLength"]
        break
      case "effect/schema/isPattern":
        out["pattern"] = p["source"]
        break
      default:
        throw new UnsupportedSchema(`the check ${id}`, "")
    }
  }
  return out
}

export const hasDefault = (ast: SchemaAST.AST): boolean => annotationsOf(SchemaAST.toEncoded(ast))["default"] !== undefined

const isStringLiteralUnion = (ast: SchemaAST.AST): ast is SchemaAST.Union =>
  SchemaAST.isUnion(ast) && ast.types.every((t) => SchemaAST.isLiteral(t) && typeof t.literal === "string")

const latest: ApiVersionName = apiVersions[apiVersions.length - 1]!

/** Whether a property exists in this version's schema (see servedFrom). */
const servedIn = (ast: SchemaAST.AST, version: ApiVersionName): boolean => {
  const from = annotationsOf(SchemaAST.toEncoded(ast))[servedFromKey] as ApiVersionName | undefined
  return from === undefined || apiVersions.indexOf(from) <= apiVersions.indexOf(version)
}

const body = (ast: SchemaAST.AST, path: string, extras: OpenApiExtras, version: ApiVersionName): Record<string, unknown> => {
  if (extras["x-kubernetes-int-or-string"] === true) return {}
  if (SchemaAST.isString(ast)) return { type: "string", ...constraints(ast, "string") }
  if (SchemaAST.isNumber(ast)) return { type: "number", ...constraints(ast, "number") }
  if (SchemaAST.isBoolean(ast)) return { type: "boolean" }
  if (SchemaAST.isUnknown(ast)) return { "x-kubernetes-preserve-unknown-fields": true }
  if (SchemaAST.isLiteral(ast) && typeof ast.literal === "string") return { type: "string", enum: [ast.literal] }
  if (isStringLiteralUnion(ast)) {
    return { type: "string", enum: ast.types.map((t) => (t as SchemaAST.Literal).literal) }
  }
  if (SchemaAST.isArrays(ast) && ast.elements.length === 0 && ast.rest.length === 1) {
    return { type: "array", items: toOpenApi(ast.rest[0]!, `${path}[]`, version), ...constraints(ast, "array") }
  }
  if (SchemaAST.isObjects(ast)) return objectBody(ast, path, version)
  throw new UnsupportedSchema(ast._tag, path)
}

const objectBody = (ast: SchemaAST.Objects, path: string, version: ApiVersionName): Record<string, unknown> => {
  const { indexSignatures, propertySignatures } = ast
  if (propertySignatures.length === 0 && indexSignatures.length === 1) {
    return {
      type: "object",
      additionalProperties: toOpenApi(indexSignatures[0]!.type, `${path}[*]`, version),
      ...constraints(ast, "object")
    }
  }
  if (indexSignatures.length > 0) throw new UnsupportedSchema("an object with both fields and a rest", path)
  const properties: Record<string, OpenApiSchema> = {}
  const required: Array<string> = []
  for (const property of propertySignatures) {
    if (!servedIn(property.type, version)) continue
    const name = String(property.name)
    const child = `${path === "" ? "" : `${path}.`}${name}`
    properties[name] = toOpenApi(property.type, child, version)
    // A field with a default is optional on the wire: the API server fills it in.
    if (!SchemaAST.isOptional(property.type) && !hasDefault(property.type)) {
      required.push(name)
    }
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    ...constraints(ast, "object")
  }
}

/**
 * Walks a Schema (its wire form) into a structural OpenAPI v3 schema: a type on every node,
 * descriptions for `kubectl explain`, defaults, enums and the Kubernetes extensions carried by
 * the openapi annotation, for one API version. Anything a structural schema cannot say is an
 * error, not a guess.
 */
export const toOpenApi = (ast: SchemaAST.AST, path = "", version: ApiVersionName = latest): OpenApiSchema => {
  const wire = SchemaAST.toEncoded(ast)
  const annotations = annotationsOf(wire)
  const extras = (annotations[openApiKey] ?? {}) as OpenApiExtras
  const description = annotations["description"]
  const defaultValue = annotations["default"]
  return {
    ...(typeof description === "string" ? { description } : {}),
    ...body(wire, path, extras, version),
    ...(defaultValue !== undefined ? { default: defaultValue } : {}),
    ...extras
  }
}
