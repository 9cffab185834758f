import { Result, Schema, SchemaIssue } from "effect"
import { escapeForeignText, quoteBounded } from "../api/goQuote.ts"
import { fieldPath } from "../api/invalidObject.ts"
import { ObjectReference } from "../api/meta.ts"
import { ImageSpec, ImageTagSpec } from "../api/nodeImage.ts"
import type { NodeImageSpec } from "../api/nodeImage.ts"
import type { KubeObject } from "../kube/KubeApi.ts"
import type { Stored } from "../kube/store.ts"
import { tagKey } from "./tagTask.ts"

/**
 * The daemon's reading of its NodeImage spec, tag by tag (issue 24): a tag it cannot read fails
 * alone, and every other tag of the node goes on.
 */
export interface NodeImageSpecView {
  /**
   * Every tag with its defaults (version 0, IfNotPresent). A tag that does not decode stands in by
   * its name, version and owners only, so that it is counted, reported Failed and announced.
   */
  readonly spec: NodeImageSpec
  /** Why each tag that does not decode fails, by tagKey: `spec.images["nginx"].tags[0].pullPolicy.timeoutSeconds: ...`. */
  readonly unreadable: ReadonlyMap<string, string>
  /** What does not decode and names no tag to fail (an image whose tags are no list, a tag without a name). */
  readonly problems: ReadonlyArray<string>
}

/** The daemon's view of its NodeImage; a failure only when the spec itself (or its image map) is no object. */
export type SpecView = Result.Result<NodeImageSpecView, string>

/** The NodeImage as the daemon's store holds it: the object and its decoded spec. */
export type StoredNodeImage = Stored<SpecView>

const format = SchemaIssue.makeFormatterStandardSchemaV1()

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const valueAt = (root: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) => (isObject(value) || Array.isArray(value) ? (value as Record<PropertyKey, unknown>)[key] : undefined),
    root
  )

/** What was written, bounded: a string quoted as Go's %q (goQuote.ts), anything else as JSON with its non-printable characters escaped. */
const shown = (value: unknown): string =>
  typeof value === "string" ? quoteBounded(value, 64) : escapeForeignText(JSON.stringify(value) ?? String(value), 64)

const lowerFirst = (text: string): string => `${text.charAt(0).toLowerCase()}${text.slice(1)}`

/** Every field that does not decode as `path: what was expected, got value`, the path from the spec's root. */
const describe = (issue: SchemaIssue.Issue, raw: unknown, at: ReadonlyArray<PropertyKey>): string => {
  const byPath = new Map<string, { readonly value: unknown; readonly expected: Array<string> }>()
  for (const { path = [], message } of format(issue).issues) {
    const relative = path as ReadonlyArray<PropertyKey>
    const field = fieldPath([...at, ...relative])
    const entry = byPath.get(field) ?? { value: valueAt(raw, relative), expected: [] }
    entry.expected.push(lowerFirst(message).replace(/^expected /, ""))
    byPath.set(field, entry)
  }
  return [...byPath]
    .map(
      ([field, { value, expected }]) => `${field}: expected ${expected.join(" and ")}${value === undefined ? "" : `, got ${shown(value)}`}`
    )
    .join("; ")
}

const decodeTag = Schema.decodeUnknownResult(ImageTagSpec, { errors: "all" })
const decodeOwners = Schema.decodeUnknownResult(Schema.Array(ObjectReference))
// An image's own fields, its tags left to be decoded one by one.
const decodeImage = Schema.decodeUnknownResult(Schema.Struct({ ...ImageSpec.fields, tags: Schema.Array(Schema.Unknown) }), {
  errors: "all"
})

/** One tag read on its own: the tag, or a stand-in and why it fails; undefined when it has no name to report under. */
type TagReading = { readonly tag: ImageTagSpec; readonly unreadable?: string } | { readonly problem: string }

const readTag = (raw: unknown, at: ReadonlyArray<PropertyKey>, imageProblem: string | undefined): TagReading => {
  const decoded = imageProblem === undefined ? decodeTag(raw) : undefined
  // A negative version decodes (validation names it) but no status can carry it: the status write
  // would be refused, and with it every tag's status on the node.
  if (decoded !== undefined && Result.isSuccess(decoded) && decoded.success.version >= 0) return { tag: decoded.success }
  const why =
    imageProblem ??
    (decoded !== undefined && Result.isSuccess(decoded)
      ? `${fieldPath([...at, "version"])}: expected a value greater than or equal to 0, got ${decoded.success.version}`
      : describe((decoded as Result.Failure<never, Schema.SchemaError>).failure.issue, raw, at))
  const name = isObject(raw) ? raw["tag"] : undefined
  if (typeof name !== "string" || name === "") return { problem: why }
  const written = isObject(raw) ? raw["version"] : undefined
  const version = Number.isSafeInteger(written) && (written as number) >= 0 ? (written as number) : 0
  const owners = decodeOwners(isObject(raw) ? (raw["ownerReferences"] ?? []) : [])
  return {
    tag: {
      tag: name,
      version,
      imagePullPolicy: "IfNotPresent",
      ...(Result.isSuccess(owners) && owners.success.length > 0 ? { ownerReferences: owners.success } : {})
    },
    unreadable: why
  }
}

/** An image entry read tag by tag, and what it adds to the view. */
interface ImageReading {
  readonly entry: ImageSpec | undefined
  readonly unreadable: ReadonlyArray<readonly [string, string]>
  readonly problems: ReadonlyArray<string>
}

const readImage = (name: string, raw: unknown): ImageReading => {
  const at = ["spec", "images", name]
  const decoded = decodeImage(raw)
  const tags = isObject(raw) ? raw["tags"] : undefined
  if (!Array.isArray(tags)) {
    const why = Result.isFailure(decoded) ? describe(decoded.failure.issue, raw, at) : `${fieldPath([...at, "tags"])}: expected an array`
    return { entry: undefined, unreadable: [], problems: [why] }
  }
  // An image field that does not decode (its pull secrets, its sandbox config) fails every tag of the image.
  const imageProblem = Result.isFailure(decoded) ? describe(decoded.failure.issue, raw, at) : undefined
  const read: Array<ImageTagSpec> = []
  const unreadable: Array<readonly [string, string]> = []
  const problems: Array<string> = []
  tags.forEach((tag, i) => {
    const reading = readTag(tag, [...at, "tags", i], imageProblem)
    if ("problem" in reading) {
      problems.push(reading.problem)
      return
    }
    read.push(reading.tag)
    if (reading.unreadable !== undefined) unreadable.push([tagKey(name, reading.tag.tag), reading.unreadable])
  })
  const fields = Result.isSuccess(decoded) ? decoded.success : {}
  const { tags: _, ...imageFields } = fields as { readonly tags?: unknown }
  return { entry: { ...(imageFields as Omit<ImageSpec, "tags">), tags: read }, unreadable, problems }
}

const readSpec = (
  raw: unknown,
  images: ReadonlyMap<unknown, ImageReading>,
  remember: (raw: unknown, reading: ImageReading) => void
): SpecView => {
  if (!isObject(raw)) return Result.fail(`spec: expected an object, got ${shown(raw)}`)
  const rawImages = raw["images"]
  if (rawImages === undefined) return Result.succeed({ spec: {}, unreadable: new Map(), problems: [] })
  if (!isObject(rawImages)) return Result.fail(`spec.images: expected an object, got ${shown(rawImages)}`)
  const entries: Record<string, ImageSpec> = {}
  const unreadable = new Map<string, string>()
  const problems: Array<string> = []
  for (const [name, entry] of Object.entries(rawImages)) {
    // An image entry left as it was (the store keeps unchanged parts the same objects) is not read again.
    const reading = images.get(entry) ?? readImage(name, entry)
    remember(entry, reading)
    if (reading.entry !== undefined) entries[name] = reading.entry
    for (const [key, why] of reading.unreadable) unreadable.set(key, why)
    problems.push(...reading.problems)
  }
  return Result.succeed({ spec: { images: entries }, unreadable, problems })
}

/** The spec without the tags that do not decode: what pins and other readers of real tasks see. */
export const readableSpec = (view: NodeImageSpecView): NodeImageSpec => {
  if (view.unreadable.size === 0) return view.spec
  const images: Record<string, ImageSpec> = {}
  for (const [name, entry] of Object.entries(view.spec.images ?? {})) {
    images[name] = { ...entry, tags: entry.tags.filter((t) => !view.unreadable.has(tagKey(name, t.tag))) }
  }
  return { images }
}

/**
 * The decoder of the daemon's NodeImage store (daemon.ts): each version's spec, decoded at the
 * store's edge, tag by tag. Status writes bring new versions with the same spec (the store keeps
 * unchanged parts the same objects), so the spec decoded last is not decoded again, nor are the
 * image entries a new spec shares with it.
 *
 * Only the last spec is remembered (one decoded spec per daemon, whatever its size): a daemon
 * watches one NodeImage and never goes back to an older spec. Remembered for as long as each spec
 * lived (a WeakMap), the decoded copies followed every version the embedded API server's watch
 * history held (10,000 NodeImage versions): in `preheat dev`, whose daemons receive the stored
 * objects themselves, 500 images on 3 nodes kept about 400 MB of decoded specs alive (issue 24).
 */
export const nodeImageSpecs = (): ((object: KubeObject) => SpecView) => {
  let lastKey: object | undefined
  let last: SpecView | undefined
  let lastImages: ReadonlyMap<unknown, ImageReading> = new Map()
  return (object) => {
    const raw = object["spec"] ?? {}
    const key = typeof raw === "object" && raw !== null ? raw : object
    if (key !== lastKey || last === undefined) {
      const images = new Map<unknown, ImageReading>()
      last = readSpec(raw, lastImages, (entry, reading) => {
        if (typeof entry === "object" && entry !== null) images.set(entry, reading)
      })
      lastImages = images
      lastKey = key
    }
    return last
  }
}
