// An object or a list in the representation the client negotiated: itself, a Table, or its
// metadata only.
import type { EncodedJson } from "./encodedJson.ts"
import type { KubeObject } from "../../../src/kube/KubeApi.ts"
import type { ServedKind } from "../catalog.ts"
import { listKind } from "../catalog.ts"
import type { Representation } from "./negotiation.ts"
import { jsonReply } from "./reply.ts"
import type { Reply } from "./reply.ts"
import { toTable } from "../tables/table.ts"
import type { IncludeObject } from "../tables/table.ts"

export interface ListMeta {
  readonly resourceVersion: string
  readonly continue?: string
  readonly remainingItemCount?: number
}

const asContentType = (apiVersion: string, as: string): string => {
  const [group, version] = apiVersion.split("/")
  return `application/json;as=${as};v=${version};g=${group}`
}

/** One object as the client asked for it (a table of one row, for kubectl get NAME). */
export const objectBody = (
  kind: ServedKind,
  object: KubeObject,
  representation: Representation,
  context: { readonly now: number; readonly include: IncludeObject; readonly noHeaders?: boolean }
): { readonly body: unknown; readonly contentType?: string } => {
  switch (representation._tag) {
    case "Object":
      return { body: object }
    case "Table":
      return {
        body: toTable(kind.table, [object], {
          include: context.include,
          apiVersion: representation.apiVersion,
          now: context.now,
          listMeta: { resourceVersion: object.metadata.resourceVersion },
          ...(context.noHeaders === true ? { noHeaders: true } : {})
        }),
        contentType: asContentType(representation.apiVersion, "Table")
      }
    case "PartialObjectMetadata":
      return {
        body: { kind: "PartialObjectMetadata", apiVersion: representation.apiVersion, metadata: object.metadata },
        contentType: asContentType(representation.apiVersion, "PartialObjectMetadata")
      }
  }
}

export const objectReply = (
  status: number,
  kind: ServedKind,
  object: KubeObject,
  representation: Representation,
  context: {
    readonly now: number
    readonly include: IncludeObject
    readonly warnings?: ReadonlyArray<string>
    readonly json?: EncodedJson
  }
): Reply => {
  const { body, contentType } = objectBody(kind, object, representation, context)
  return jsonReply(status, body, {
    ...(context.json === undefined ? {} : { json: context.json }),
    ...(representation._tag === "Object" ? { encoding: representation.encoding } : {}),
    ...(contentType === undefined ? {} : { contentType }),
    ...(context.warnings === undefined ? {} : { warnings: context.warnings })
  })
}

const listMetaOf = (meta: ListMeta) => ({
  resourceVersion: meta.resourceVersion,
  ...(meta.continue === undefined ? {} : { continue: meta.continue }),
  ...(meta.remainingItemCount === undefined ? {} : { remainingItemCount: meta.remainingItemCount })
})

export const listReply = (
  kind: ServedKind,
  items: ReadonlyArray<KubeObject>,
  meta: ListMeta,
  representation: Representation,
  context: { readonly now: number; readonly include: IncludeObject }
): Reply => {
  switch (representation._tag) {
    case "Object":
      return jsonReply(
        200,
        {
          apiVersion: kind.resource.apiVersion,
          kind: listKind(kind),
          metadata: listMetaOf(meta),
          items
        },
        { encoding: representation.encoding }
      )
    case "Table":
      return jsonReply(
        200,
        toTable(kind.table, items, {
          include: context.include,
          apiVersion: representation.apiVersion,
          now: context.now,
          listMeta: listMetaOf(meta)
        }),
        { contentType: asContentType(representation.apiVersion, "Table") }
      )
    case "PartialObjectMetadata":
      return jsonReply(
        200,
        {
          kind: "PartialObjectMetadataList",
          apiVersion: representation.apiVersion,
          metadata: listMetaOf(meta),
          items: items.map((o) => ({ kind: "PartialObjectMetadata", apiVersion: representation.apiVersion, metadata: o.metadata }))
        },
        { contentType: asContentType(representation.apiVersion, "PartialObjectMetadataList") }
      )
  }
}
