// A custom resource's table from its CRD's additionalPrinterColumns, as apiextensions-apiserver's
// tableconvertor builds it: the name first, then one cell per column from its simple JSONPath.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import { ageOf } from "./age.ts"
import { column, nameColumn } from "./table.ts"
import type { TableConvertor } from "./table.ts"

export interface PrinterColumn {
  readonly name: string
  readonly type: string
  readonly jsonPath: string
  readonly description?: string
  readonly format?: string
  readonly priority?: number
}

/** `.status.desired`, `.spec.selector.names[0]`, `.metadata.labels.app\.kubernetes\.io/name`. */
export const jsonPathValue = (object: unknown, path: string): unknown => {
  const parts =
    path
      .replace(/^\{?\.?/, "")
      .replace(/\}$/, "")
      .match(/(?:\\.|[^.[\]])+|\[\d+\]/g) ?? []
  let node: unknown = object
  for (const part of parts) {
    if (part.startsWith("[")) {
      const index = Number(part.slice(1, -1))
      node = Array.isArray(node) ? node[index] : undefined
    } else {
      const key = part.replace(/\\\./g, ".")
      node = isPlainObject(node) && Object.hasOwn(node, key) ? node[key] : undefined
    }
  }
  return node
}

// A value that does not fit the column's type shows as an empty cell (null), as on a real server.
const cell = (type: string, value: unknown, now: number): unknown => {
  if (value === undefined || value === null) return null
  switch (type) {
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null
    case "number":
      return typeof value === "number" ? value : null
    case "boolean":
      return typeof value === "boolean" ? value : null
    case "date":
      return typeof value === "string" ? ageOf(value, now) : null
    default:
      // A string column prints any value as text (kubectl's JSONPath printer).
      return typeof value === "string" ? value : JSON.stringify(value)
  }
}

export const printerColumnTable = (columns: ReadonlyArray<PrinterColumn>): TableConvertor => ({
  columns: [
    nameColumn,
    ...columns.map((c) =>
      column(c.name, c.type, c.description ?? "", {
        ...(c.format === undefined ? {} : { format: c.format }),
        ...(c.priority === undefined ? {} : { priority: c.priority })
      })
    )
  ],
  cells: (object: KubeObject, now: number) => [
    object.metadata.name ?? "",
    ...columns.map((c) => cell(c.type, jsonPathValue(object, c.jsonPath), now))
  ]
})
