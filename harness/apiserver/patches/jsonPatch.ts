// RFC 6902 JSON patch (`application/json-patch+json`), with the messages of evanphx/json-patch,
// the library kube-apiserver applies them with. The document is never mutated: each operation
// copies the path it changes and shares the rest.
import { Data, Result } from "effect"
import { isPlainObject } from "../../../src/json/plainObject.ts"

/** The patch could not be applied; `malformed` distinguishes a bad patch (400) from a failed one (422). */
class JsonPatchError extends Data.TaggedError("JsonPatchError")<{
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

/** A step of applying a patch: its value, or why the patch fails. */
type Patched<A> = Result.Result<A, JsonPatchError>

const fail = (message: string, malformed = false): Patched<never> => Result.fail(new JsonPatchError({ message, malformed }))

const pointer = (path: string): Patched<ReadonlyArray<string>> => {
  if (path === "") return Result.succeed([])
  if (!path.startsWith("/")) return fail(`invalid JSON pointer: ${JSON.stringify(path)}`)
  return Result.succeed(
    path
      .slice(1)
      .split("/")
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
  )
}

const operationOf = (raw: unknown): Patched<Operation> => {
  if (!isPlainObject(raw)) return fail("json: cannot unmarshal into Go value of type jsonpatch.Operation", true)
  const op = typeof raw["op"] === "string" ? raw["op"] : "unknown"
  const path = raw["path"]
  if (typeof path !== "string") return fail(`operation missing path field`, true)
  return Result.succeed({
    op,
    path,
    ...(typeof raw["from"] === "string" ? { from: raw["from"] } : {}),
    value: raw["value"],
    hasValue: Object.hasOwn(raw, "value")
  })
}

// Every operation is read before any applies: a malformed one fails the patch as a whole.
const operations = (patch: unknown): Patched<ReadonlyArray<Operation>> =>
  Array.isArray(patch)
    ? Result.all(patch.map(operationOf))
    : fail("json: cannot unmarshal object into Go value of type jsonpatch.Patch", true)

const arrayIndex = (token: string, length: number, forInsert: boolean): Patched<number> => {
  if (forInsert && token === "-") return Result.succeed(length)
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return fail(`Unable to access invalid index: ${token}`)
  const index = Number(token)
  if (forInsert ? index > length : index >= length) return fail(`Unable to access invalid index: ${index}`)
  return Result.succeed(index)
}

const get = (doc: unknown, tokens: ReadonlyArray<string>): Patched<unknown> =>
  Result.gen(function* () {
    let node = doc
    for (const token of tokens) {
      if (Array.isArray(node)) node = node[yield* arrayIndex(token, node.length, false)]
      else if (isPlainObject(node) && Object.hasOwn(node, token)) node = node[token]
      else return undefined
    }
    return node
  })

type Edit = (container: unknown, last: string) => Patched<unknown>

const missingPath = (op: string, path: string): Patched<never> =>
  fail(`${op} operation does not apply: doc is missing path: ${JSON.stringify(path)}`)

// Copies the containers along `tokens` and applies `edit` to the last one.
const update = (doc: unknown, tokens: ReadonlyArray<string>, edit: Edit, op: string, path: string): Patched<unknown> =>
  Result.gen(function* () {
    if (tokens.length === 0) return yield* edit(undefined, "")
    const [head, ...rest] = tokens as [string, ...Array<string>]
    if (rest.length === 0) return yield* edit(doc, head)
    if (Array.isArray(doc)) {
      const index = yield* arrayIndex(head, doc.length, false)
      const copy = [...doc]
      copy[index] = yield* update(doc[index], rest, edit, op, path)
      return copy
    }
    if (isPlainObject(doc) && Object.hasOwn(doc, head)) return { ...doc, [head]: yield* update(doc[head], rest, edit, op, path) }
    return yield* missingPath(op, path)
  })

const add =
  (value: unknown, op: string, path: string): Edit =>
  (container, last) => {
    if (container === undefined && last === "") return Result.succeed(value)
    if (Array.isArray(container)) {
      return Result.map(arrayIndex(last, container.length, true), (index) => [
        ...container.slice(0, index),
        value,
        ...container.slice(index)
      ])
    }
    if (isPlainObject(container)) return Result.succeed({ ...container, [last]: value })
    return missingPath(op, path)
  }

const remove =
  (op: string, path: string): Edit =>
  (container, last) => {
    if (Array.isArray(container)) {
      return Result.map(arrayIndex(last, container.length, false), (index) => [...container.slice(0, index), ...container.slice(index + 1)])
    }
    if (isPlainObject(container) && Object.hasOwn(container, last)) {
      const { [last]: _, ...rest } = container
      return Result.succeed(rest)
    }
    return missingPath(op, path)
  }

const replace =
  (value: unknown, path: string): Edit =>
  (container, last) => {
    if (container === undefined && last === "") return Result.succeed(value)
    if (Array.isArray(container)) {
      return Result.map(arrayIndex(last, container.length, false), (index) => {
        const copy = [...container]
        copy[index] = value
        return copy
      })
    }
    if (isPlainObject(container) && Object.hasOwn(container, last)) return Result.succeed({ ...container, [last]: value })
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

const applyOne = (doc: unknown, operation: Operation): Patched<unknown> =>
  Result.gen(function* () {
    const { op, path } = operation
    const tokens = yield* pointer(path)
    const value: Patched<unknown> = operation.hasValue ? Result.succeed(operation.value) : fail(`missing value for ${op} operation`, true)
    switch (op) {
      case "add":
        return yield* update(doc, tokens, add(yield* value, op, path), op, path)
      case "remove":
        return yield* update(doc, tokens, remove(op, path), op, path)
      case "replace":
        return yield* update(doc, tokens, replace(yield* value, path), op, path)
      case "move":
      case "copy": {
        if (operation.from === undefined) return yield* fail(`missing from field for ${op} operation`, true)
        const from = yield* pointer(operation.from)
        const moved = yield* get(doc, from)
        if (moved === undefined) {
          return yield* fail(`${op} operation does not apply: doc is missing from path: ${JSON.stringify(operation.from)}`)
        }
        const source = op === "move" ? yield* update(doc, from, remove(op, operation.from), op, operation.from) : doc
        return yield* update(source, tokens, add(moved, op, path), op, path)
      }
      case "test": {
        const actual = yield* get(doc, tokens)
        if (actual === undefined) return yield* fail(`unable to test missing value: ${path}`)
        return deepEqual(actual, yield* value) ? doc : yield* fail(`testing value ${path} failed: test failed`)
      }
      default:
        return yield* fail(`Unexpected kind: ${op}`, true)
    }
  })

export const applyJsonPatch = (doc: unknown, patch: unknown): Result.Result<unknown, JsonPatchError> =>
  Result.gen(function* () {
    let patched = doc
    for (const operation of yield* operations(patch)) patched = yield* applyOne(patched, operation)
    return patched
  })
