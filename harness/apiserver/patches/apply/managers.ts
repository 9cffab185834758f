// An object's metadata.managedFields: one entry per field manager, each with the fields it owns in
// FieldsV1, as kube-apiserver writes them. A manager is identified by its name, operation
// (Apply or Update) and subresource, and for Update also by the API version it wrote with.
import { isPlainObject } from "../../../../src/json/plainObject.ts"
import { FieldSet } from "./fieldSet.ts"

export type Operation = "Apply" | "Update"

export interface ManagerEntry {
  readonly manager: string
  readonly operation: Operation
  readonly apiVersion: string
  /** "" for the main resource, else "status". */
  readonly subresource: string
  readonly time: string | undefined
  readonly fields: FieldSet
}

export const identityOf = (entry: Pick<ManagerEntry, "manager" | "operation" | "apiVersion" | "subresource">): string =>
  JSON.stringify([entry.manager, entry.operation, entry.subresource, entry.operation === "Update" ? entry.apiVersion : ""])

/** The entries of a managedFields value; anything that is not a readable entry is dropped. */
export const decodeManagedFields = (value: unknown): Array<ManagerEntry> => {
  if (!Array.isArray(value)) return []
  const entries: Array<ManagerEntry> = []
  for (const raw of value) {
    if (!isPlainObject(raw)) continue
    const operation = raw["operation"]
    if (operation !== "Apply" && operation !== "Update") continue
    if (raw["fieldsType"] !== undefined && raw["fieldsType"] !== "FieldsV1") continue
    const fields = FieldSet.fromFieldsV1(raw["fieldsV1"] ?? {})
    if (fields === undefined) continue
    entries.push({
      manager: typeof raw["manager"] === "string" ? raw["manager"] : "",
      operation,
      apiVersion: typeof raw["apiVersion"] === "string" ? raw["apiVersion"] : "",
      subresource: typeof raw["subresource"] === "string" ? raw["subresource"] : "",
      time: typeof raw["time"] === "string" ? raw["time"] : undefined,
      fields
    })
  }
  return entries
}

const seconds = (time: string | undefined): number => (time === undefined ? 0 : Math.floor(Date.parse(time) / 1000) || 0)

// kube-apiserver's order: Apply before Update, then oldest first, then by manager, version, subresource.
const order = (a: ManagerEntry, b: ManagerEntry): number =>
  a.operation.localeCompare(b.operation) ||
  seconds(a.time) - seconds(b.time) ||
  (a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0) ||
  (a.apiVersion < b.apiVersion ? -1 : a.apiVersion > b.apiVersion ? 1 : 0) ||
  (a.subresource < b.subresource ? -1 : a.subresource > b.subresource ? 1 : 0)

/** The entries as metadata.managedFields, managers owning nothing left out. */
export const encodeManagedFields = (entries: ReadonlyArray<ManagerEntry>): Array<Record<string, unknown>> =>
  entries
    .filter((entry) => !entry.fields.isEmpty())
    .sort(order)
    .map((entry) => ({
      manager: entry.manager,
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      ...(entry.time === undefined ? {} : { time: entry.time }),
      fieldsType: "FieldsV1",
      fieldsV1: entry.fields.toFieldsV1(),
      ...(entry.subresource === "" ? {} : { subresource: entry.subresource })
    }))

/** How kube-apiserver names a manager in a conflict: `"name"`, and for Update `"name" using v1`. */
export const describeManager = (entry: ManagerEntry): string => {
  let text = JSON.stringify(entry.manager)
  if (entry.subresource !== "") text += ` with subresource ${JSON.stringify(entry.subresource)}`
  // The identity a conflict names carries no time, so kube-apiserver prints none.
  if (entry.operation === "Update") text += ` using ${entry.apiVersion}`
  return text
}
