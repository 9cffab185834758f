// Who owns which fields after a write, as kube-apiserver's field manager decides it with
// structured-merge-diff: an Update takes the fields it changed from everyone; an Apply owns exactly
// the fields of its configuration, conflicts with other managers over values it would change
// (unless forced), and removes the fields it applied last time, left out now, that no one else owns.
import { Data, Result } from "effect"
import { isPlainObject } from "../../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../../src/json/plainObject.ts"
import { compare } from "./compare.ts"
import { FieldSet, fieldElement } from "./fieldSet.ts"
import type { FieldPath } from "./fieldSet.ts"
import type { FieldType } from "./fieldTypes.ts"
import { identityOf } from "./managers.ts"
import type { ManagerEntry } from "./managers.ts"
import { merge } from "./merge.ts"
import { removeFields, toFieldSet, withNamedFields } from "./objectFields.ts"

/** Who writes, how the kind's fields are typed, and when. */
export interface Writer {
  readonly type: FieldType
  readonly manager: string
  readonly apiVersion: string
  /** "" for the main resource, "status" for the status subresource. */
  readonly subresource: string
  /** RFC 3339, for the entry's time when its fields change. */
  readonly now: string
}

export interface Conflict {
  readonly manager: ManagerEntry
  readonly path: FieldPath
}

/** Fields another manager owns that the apply would change (only when not forced). */
export class ApplyConflicts extends Data.TaggedError("ApplyConflicts")<{ readonly conflicts: ReadonlyArray<Conflict> }> {}

// Fields no manager owns: identity and what the server itself maintains (kube-apiserver's stripMeta).
const serverFields = FieldSet.of([
  [fieldElement("apiVersion")],
  [fieldElement("kind")],
  [fieldElement("metadata")],
  ...["name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields", "resourceVersion"].map(
    (name) => [fieldElement("metadata"), fieldElement(name)]
  )
])

/** The object without metadata.managedFields, which are bookkeeping, not content. */
const withoutManagedFields = (object: JsonObject): JsonObject => {
  const metadata = object["metadata"]
  if (!isPlainObject(metadata) || !("managedFields" in metadata)) return object
  const { managedFields: _, ...rest } = metadata
  return { ...object, metadata: rest }
}

// The entry's time says when the manager last changed the object (as kube-apiserver keeps it).
const entryFor = (
  writer: Writer,
  operation: ManagerEntry["operation"],
  previous: ManagerEntry | undefined,
  fields: FieldSet,
  changed: boolean
): ManagerEntry => ({
  manager: writer.manager,
  operation,
  apiVersion: writer.apiVersion,
  subresource: writer.subresource,
  time: changed || previous?.time === undefined ? writer.now : previous.time,
  fields
})

/** The managers after an ordinary write (create, update, patch) from `before` (undefined: none) to `after`. */
export const recordUpdate = (
  before: JsonObject | undefined,
  after: JsonObject,
  entries: ReadonlyArray<ManagerEntry>,
  writer: Writer
): Array<ManagerEntry> => {
  const base = before === undefined ? {} : withoutManagedFields(before)
  const { added, modified, removed } = compare(base, withoutManagedFields(after), writer.type)
  const changed = added.union(modified)
  const identity = identityOf({ ...writer, operation: "Update" })
  const previous = entries.find((entry) => identityOf(entry) === identity)
  const out: Array<ManagerEntry> = entries
    .filter((entry) => entry !== previous)
    .map((entry) => ({ ...entry, fields: entry.fields.difference(changed).difference(removed) }))
  const taken = changed.difference(serverFields)
  const fields = (previous?.fields ?? new FieldSet()).difference(removed).union(taken)
  out.push(entryFor(writer, "Update", previous, fields, !taken.isEmpty()))
  return out.filter((entry) => !entry.fields.isEmpty())
}

// Removes what the applier applied last time and not now, unless another manager owns it
// (structured-merge-diff's prune, with its add-back of owned and dangling items).
const prune = (merged: unknown, last: FieldSet, managed: FieldSet, type: FieldType): unknown => {
  const named = (set: FieldSet, value: unknown) => withNamedFields(set, value, type)
  const fieldsOf = (value: unknown) => named(toFieldSet(value, type), value)
  const lastNamed = named(last, merged)
  const first = removeFields(merged, lastNamed, type)
  const mergedFields = fieldsOf(merged)
  const ownedBack = removeFields(merged, mergedFields.difference(fieldsOf(first).union(named(managed, merged))), type)
  return removeFields(merged, mergedFields.difference(fieldsOf(ownedBack)).intersection(lastNamed), type)
}

/**
 * An applied configuration: the object it makes of `live` (undefined: the object does not exist
 * yet) and the managers after it, or the conflicts with other managers when not forced.
 */
export const applyConfiguration = (
  live: JsonObject | undefined,
  config: JsonObject,
  entries: ReadonlyArray<ManagerEntry>,
  writer: Writer,
  force: boolean
): Result.Result<{ readonly object: JsonObject; readonly managers: Array<ManagerEntry> }, ApplyConflicts> => {
  const base = live === undefined ? {} : withoutManagedFields(live)
  const identity = identityOf({ ...writer, operation: "Apply" })
  const previous = entries.find((entry) => identityOf(entry) === identity)
  const others = entries.filter((entry) => entry !== previous)
  const applied = toFieldSet(config, writer.type)
  let object = merge(base, config, writer.type) as JsonObject
  if (previous !== undefined && !previous.fields.isEmpty()) {
    const managed = others.reduce((all, entry) => all.union(entry.fields), applied)
    object = prune(object, previous.fields, managed, writer.type) as JsonObject
  }
  const { added, modified, removed } = compare(base, object, writer.type)
  const changed = added.union(modified)
  const conflicts: Array<Conflict> = []
  const managers: Array<ManagerEntry> = []
  for (const entry of others) {
    const contested = entry.fields.intersection(changed)
    for (const path of contested.paths()) conflicts.push({ manager: entry, path })
    managers.push({ ...entry, fields: entry.fields.difference(contested).difference(removed) })
  }
  if (conflicts.length > 0 && !force) return Result.fail(new ApplyConflicts({ conflicts }))
  const changedObject = !(added.isEmpty() && modified.isEmpty() && removed.isEmpty())
  managers.push(entryFor(writer, "Apply", previous, applied.difference(serverFields), changedObject))
  return Result.succeed({ object, managers: managers.filter((entry) => !entry.fields.isEmpty()) })
}
