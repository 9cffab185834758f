// A request as the handlers see it, with the parsing they share: the body, the query parameters
// and selectors, all failing as kube-apiserver fails them (400 Bad Request).
import { Effect, Result } from "effect"
import { parse as parseYaml } from "yaml"
import type { ListOptions } from "../../../src/kube/KubeApi.ts"
import { parseFieldSelector, parseLabelSelector } from "../storage/selectorQuery.ts"
import { ApiFailure, badRequest, unsupportedMediaType } from "./apiStatus.ts"
import type { ServedKind } from "../catalog.ts"
import { isSelectableField } from "../storage/fieldSelection.ts"
import type { MediaRange } from "./negotiation.ts"
import { exceedsJsonDepth } from "./jsonDepth.ts"
import { decodeProtobufBody, protobufMediaType, UndecodableProtobuf } from "./protobufBodies.ts"

export interface ApiRequest {
  readonly method: string
  readonly url: URL
  readonly accept: ReadonlyArray<MediaRange>
  /** The media type of the body, lowercased, without parameters ("" without a body). */
  readonly contentType: string
  /** The User-Agent header: an Update's field manager when the request names none. */
  readonly userAgent?: string
  readonly body: Buffer
}

export const query = (request: ApiRequest, name: string): string | null => request.url.searchParams.get(name)

/**
 * A boolean query parameter as kube-apiserver converts one: absent is false, and a present value
 * is true unless it is "0" or "false" in any case (so the Python client's `True`, and an empty value).
 */
export const isTrue = (value: string | null): boolean => value !== null && value !== "0" && value.toLowerCase() !== "false"

/** `dryRun=All`: validate and answer, but store nothing. */
export const isDryRun = (request: ApiRequest): boolean => request.url.searchParams.getAll("dryRun").includes("All")

/**
 * The body as JSON (or YAML, which curl users send, or the protobuf kubectl's typed commands
 * send), or 400 (415 for protobuf of a kind not decoded). An empty body is `undefined`.
 */
export const parseBody = (request: ApiRequest): Effect.Effect<unknown, ApiFailure> =>
  Effect.suspend(() => {
    if (request.contentType === protobufMediaType) {
      const decoded = decodeProtobufBody(request.body)
      return decoded instanceof UndecodableProtobuf
        ? Effect.fail(
            new ApiFailure({
              ...unsupportedMediaType(request.contentType, ["application/json", "application/yaml"]),
              message: decoded.message
            })
          )
        : Effect.succeed(decoded)
    }
    const text = request.body.toString("utf8")
    if (text.trim() === "") return Effect.succeed(undefined)
    if (request.contentType !== "application/yaml" && exceedsJsonDepth(text)) {
      return Effect.fail(badRequest("couldn't get version/kind; json parse error: exceeded max depth"))
    }
    try {
      return Effect.succeed(request.contentType === "application/yaml" ? parseYaml(text) : JSON.parse(text))
    } catch (error) {
      return Effect.fail(badRequest(`couldn't get version/kind; json parse error: ${(error as Error).message}`))
    }
  })

/** An integer query parameter (limit, timeoutSeconds), or 400. */
export const integerParam = (request: ApiRequest, name: string): Effect.Effect<number | undefined, ApiFailure> => {
  const value = query(request, name)
  if (value === null || value === "") return Effect.succeed(undefined)
  const n = Number(value)
  return Number.isInteger(n) && n >= 0
    ? Effect.succeed(n)
    : Effect.fail(badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`))
}

/** The list options of a list, watch or deletecollection request, with its selectors checked. */
export const listOptions = (
  request: ApiRequest,
  kind: ServedKind,
  namespace: string | undefined,
  name?: string
): Effect.Effect<ListOptions, ApiFailure> =>
  Effect.gen(function* () {
    const labelSelector = query(request, "labelSelector") ?? ""
    let fieldSelector = query(request, "fieldSelector") ?? ""
    if (name !== undefined) fieldSelector = fieldSelector === "" ? `metadata.name=${name}` : `${fieldSelector},metadata.name=${name}`
    const labels = parseLabelSelector(labelSelector)
    if (Result.isFailure(labels)) return yield* Effect.fail(badRequest(labels.failure.message))
    const fields = parseFieldSelector(fieldSelector)
    if (Result.isFailure(fields)) return yield* Effect.fail(badRequest(fields.failure.message))
    for (const { field } of fields.success.requirements) {
      if (!isSelectableField(kind.resource, field)) {
        return yield* Effect.fail(badRequest(`field label not supported: ${field}`))
      }
    }
    return {
      ...(namespace === undefined ? {} : { namespace }),
      ...(labelSelector === "" ? {} : { labelSelector }),
      ...(fieldSelector === "" ? {} : { fieldSelector })
    }
  })
