// RFC 6902 JSON patch (`application/json-patch+json`), with the messages of evanphx/json-patch,
// the library kube-apiserver applies them with. The document is never mutated: each operation
// copies the path it changes and shares the rest.
import { Data, Result } from "effect"
import { isPlainObject } from "../../src/kube/frozenJson.ts"

/** The patch could not be applied; `malformed` distinguishes a bad patch (400) from a failed one (422). */
export class JsonPatchError extends Data.TaggedError("JsonPatchError")<{
  readonly message: string
  readonly malformed: boolean
}> {}

interface Operation {
  readonly op: string
  readonly path: string
  readonly from?: string
  readonly value?: unknown
  readonly hasValue: boolean
}

const fail = (message: string, malformed = false) => {
  throw new JsonPatchError({ message, malformed })
}

const pointer = (path: string): ReadonlyArray<string> => {
  if (path === "") return []
  if (!path.startsWith("/")) fail(`invalid JSON pointer: ${JSON.stringify(path)}`)
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
}

const operations = (patch: unknown): ReadonlyArray<Operation> => {
  if (!Array.isArray(patch)) return fail("json: cannot unmarshal object into Go value of type jsonpatch.Patch", true)
  return patch.map((raw): Operation => {
    if (!isPlainObject(raw)) return fail("json: cannot unmarshal into Go value of type jsonpatch.Operation", true)
    const op = typeof raw["op"] === "string" ? raw["op"] : "unknown"
    const path = raw["path"]
    if (typeof path !== "string") return fail(`operation missing path field`, true)
    return {
      op,
      path,
      ...(typeof raw["from"] === "string" ? { from: raw["from"] } : {}),
      value: raw["value"],
      hasValue: Object.hasOwn(raw, "value")
    }
  })
}

const arrayIndex = (token: string, length: number, forInsert: boolean): number => {
  if (forInsert && token === "-") return length
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return fail(`Unable to access invalid index: ${token}`)
  const index = Number(token)
  if (forInsert ? index > length : index >= length) return fail(`Unable to access invalid index: ${index}`)
  return index
}

const get = (doc: unknown, tokens: ReadonlyArray<string>): unknown => {
  let node = doc
  for (const token of tokens) {
    if (Array.isArray(node)) node = node[arrayIndex(token, node.length, false)]
    else if (isPlainObject(node) && Object.hasOwn(node, token)) node = node[token]
    else return undefined
  }
  return node
}

type Edit = (container: unknown, last: string) => unknown

// Copies the containers along `tokens` and applies `edit` to the last one.
const update = (doc: unknown, tokens: ReadonlyArray<string>, edit: Edit, op: string, path: string): unknown => {
  if (tokens.length === 0) return edit(undefined, "")
  const [head, ...rest] = tokens as [string, ...Array<string>]
  if (rest.length === 0) return edit(doc, head)
  if (Array.isArray(doc)) {
    const index = arrayIndex(head, doc.length, false)
    const copy = [...doc]
    copy[index] = update(doc[index], rest, edit, op, path)
    return copy
  }
  if (isPlainObject(doc) && Object.hasOwn(doc, head)) return { ...doc, [head]: update(doc[head], rest, edit, op, path) }
  return fail(`${op} operation does not apply: doc is missing path: ${JSON.stringify(path)}`)
}

const add =
  (value: unknown, op: string, path: string): Edit =>
  (container, last) => {
    if (container === undefined && last === "") return value
    if (Array.isArray(container)) {
      const index = arrayIndex(last, container.length, true)
      return [...container.slice(0, index), value, ...container.slice(index)]
    }
    if (isPlainObject(container)) return { ...container, [last]: value }
    return fail(`${op} operation does not apply: doc is missing path: ${JSON.stringify(path)}`)
  }

const remove =
  (op: string, path: string): Edit =>
  (container, last) => {
    if (Array.isArray(container)) {
      const index = arrayIndex(last, container.length, false)
      return [...container.slice(0, index), ...container.slice(index + 1)]
    }
    if (isPlainObject(container) && Object.hasOwn(container, last)) {
      const { [last]: _, ...rest } = container
      return rest
    }
    return fail(`${op} operation does not apply: doc is missing path: ${JSON.stringify(path)}`)
  }

const replace =
  (value: unknown, path: string): Edit =>
  (container, last) => {
    if (container === undefined && last === "") return value
    if (Array.isArray(container)) {
      const index = arrayIndex(last, container.length, false)
      const copy = [...container]
      copy[index] = value
      return copy
    }
    if (isPlainObject(container) && Object.hasOwn(container, last)) return { ...container, [last]: value }
    return fail(`replace operation does not apply: doc is missing key: ${path}`)
  }

const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]))
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

const applyOne = (doc: unknown, operation: Operation): unknown => {
  const { op, path } = operation
  const tokens = pointer(path)
  const value = (): unknown => (operation.hasValue ? operation.value : fail(`missing value for ${op} operation`, true))
  switch (op) {
    case "add":
      return update(doc, tokens, add(value(), op, path), op, path)
    case "remove":
      return update(doc, tokens, remove(op, path), op, path)
    case "replace":
      return update(doc, tokens, replace(value(), path), op, path)
    case "move":
    case "copy": {
      if (operation.from === undefined) return fail(`missing from field for ${op} operation`, true)
      const from = pointer(operation.from)
      const moved = get(doc, from)
      if (moved === undefined) return fail(`${op} operation does not apply: doc is missing from path: ${JSON.stringify(operation.from)}`)
      const source = op === "move" ? update(doc, from, remove(op, operation.from), op, operation.from) : doc
      return update(source, tokens, add(moved, op, path), op, path)
    }
    case "test": {
      const actual = get(doc, tokens)
      if (actual === undefined) return fail(`unable to test missing value: ${path}`)
      return deepEqual(actual, value()) ? doc : fail(`testing value ${path} failed: test failed`)
    }
    default:
      return fail(`Unexpected kind: ${op}`, true)
  }
}

export const applyJsonPatch = (doc: unknown, patch: unknown): Result.Result<unknown, JsonPatchError> => {
  try {
    return Result.succeed(operations(patch).reduce(applyOne, doc))
  } catch (error) {
    if (error instanceof JsonPatchError) return Result.fail(error)
    throw error
  }
}
