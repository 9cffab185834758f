// Content negotiation: which representation of a response the client's Accept header asks for,
// taking the first acceptable media range as kube-apiserver does (kubectl lists its preferences
// in order: a Table first, then plain JSON).

export interface MediaRange {
  readonly type: string
  readonly params: Readonly<Record<string, string>>
}

export const parseAccept = (header: string | undefined): ReadonlyArray<MediaRange> =>
  (header ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const [type = "", ...params] = part.split(";").map((p) => p.trim())
      return {
        type: type.toLowerCase(),
        params: Object.fromEntries(
          params.map((p) => {
            const eq = p.indexOf("=")
            return eq < 0 ? [p, ""] : [p.slice(0, eq).trim(), p.slice(eq + 1).trim()]
          })
        )
      }
    })

export type Encoding = "json" | "yaml"

/** What a resource response should be: the objects themselves, a Table, or their metadata only. */
export type Representation =
  | { readonly _tag: "Object"; readonly encoding: Encoding }
  | { readonly _tag: "Table"; readonly apiVersion: string }
  | { readonly _tag: "PartialObjectMetadata"; readonly apiVersion: string }

const encodingOf = (type: string): Encoding | undefined =>
  type === "application/json" || type === "application/*" || type === "*/*" ? "json" : type === "application/yaml" ? "yaml" : undefined

/** undefined: nothing the client accepts can be served (406). No Accept header means JSON. */
export const negotiateResource = (ranges: ReadonlyArray<MediaRange>, list: boolean): Representation | undefined => {
  if (ranges.length === 0) return { _tag: "Object", encoding: "json" }
  for (const { type, params } of ranges) {
    const encoding = encodingOf(type)
    if (encoding === undefined) continue
    const as = params["as"]
    if (as === undefined) return { _tag: "Object", encoding }
    if (params["g"] !== "meta.k8s.io" || (params["v"] !== "v1" && params["v"] !== "v1beta1") || encoding !== "json") continue
    const apiVersion = `meta.k8s.io/${params["v"]}`
    if (as === "Table") return { _tag: "Table", apiVersion }
    if (as === (list ? "PartialObjectMetadataList" : "PartialObjectMetadata")) return { _tag: "PartialObjectMetadata", apiVersion }
  }
  return undefined
}

export const aggregatedDiscoveryType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

/** Whether the client asks for aggregated discovery (apidiscovery.k8s.io/v2) before the legacy lists. */
export const wantsAggregatedDiscovery = (ranges: ReadonlyArray<MediaRange>): boolean => {
  for (const { type, params } of ranges) {
    if (encodingOf(type) === undefined) continue
    if (params["as"] === undefined) return false
    if (params["as"] === "APIGroupDiscoveryList" && params["g"] === "apidiscovery.k8s.io" && params["v"] === "v2") return true
  }
  return false
}
