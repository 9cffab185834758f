// meta.k8s.io/v1 Table responses: what `kubectl get` prints, columns decided by the server.
import type { KubeObject } from "../../../src/kube/KubeApi.ts"

export interface ColumnDefinition {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  /** 0: always shown; 1 and more: only with `-o wide`. */
  readonly priority: number
}

/** How one kind becomes table rows: its columns and each object's cells in that order. */
export interface TableConvertor {
  readonly columns: ReadonlyArray<ColumnDefinition>
  readonly cells: (object: KubeObject, now: number) => ReadonlyArray<unknown>
}

export const column = (
  name: string,
  type: string,
  description: string,
  options: { format?: string; priority?: number } = {}
): ColumnDefinition => ({
  name,
  type,
  format: options.format ?? "",
  description,
  priority: options.priority ?? 0
})

export const nameColumn = column(
  "Name",
  "string",
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.",
  { format: "name" }
)

/** What a row carries besides its cells: the `includeObject` query parameter. */
export type IncludeObject = "None" | "Object" | "PartialObjectMetadata"

export const parseIncludeObject = (value: string | null): IncludeObject | undefined =>
  value === null || value === ""
    ? "PartialObjectMetadata"
    : value === "None" || value === "Object" || value === "PartialObjectMetadata"
      ? value
      : undefined

const rowObject = (object: KubeObject, include: IncludeObject, tableApiVersion: string): unknown => {
  switch (include) {
    case "None":
      return undefined
    case "Object":
      return object
    case "PartialObjectMetadata":
      return { kind: "PartialObjectMetadata", apiVersion: tableApiVersion, metadata: object.metadata }
  }
}

export interface TableOptions {
  readonly include: IncludeObject
  /** `meta.k8s.io/v1` or the older `meta.k8s.io/v1beta1`, as the client asked. */
  readonly apiVersion: string
  readonly now: number
  /** Leaves the column definitions out (the second and later events of a watch). */
  readonly noHeaders?: boolean
  readonly listMeta?: Readonly<Record<string, unknown>>
}

export const toTable = (convertor: TableConvertor, objects: ReadonlyArray<KubeObject>, options: TableOptions) => ({
  kind: "Table",
  apiVersion: options.apiVersion,
  metadata: options.listMeta ?? {},
  columnDefinitions: options.noHeaders === true ? [] : convertor.columns,
  rows: objects.map((object) => {
    const embedded = rowObject(object, options.include, options.apiVersion)
    return { cells: convertor.cells(object, options.now), ...(embedded === undefined ? {} : { object: embedded }) }
  })
})
