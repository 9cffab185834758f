// The project's own validation of the custom kinds (src/api/decode.ts) as an admission step: what
// the controller would mark invalid is rejected at once, as a validating webhook would do. Off by
// default, because a real cluster running preheat has only the CRDs' rules (and the controller's
// conditions for the rest); on for users and tests that want every SPEC message from the server.
import { Result } from "effect"
import { decodeAdvancedCronJob, decodeImageListPullJob, decodeImagePullJob, decodeNodeImage } from "../../../src/api/decode.ts"
import type { ServedKind } from "../catalog.ts"
import type { Cause } from "../storage/storeErrors.ts"

const decoders: Readonly<
  Record<
    string,
    (input: unknown) => Result.Result<unknown, { readonly errors: ReadonlyArray<{ readonly path: string; readonly message: string }> }>
  >
> = {
  ImagePullJob: decodeImagePullJob,
  ImageListPullJob: decodeImageListPullJob,
  NodeImage: decodeNodeImage,
  AdvancedCronJob: decodeAdvancedCronJob
}

export const decoderCauses = (kind: ServedKind, object: unknown): ReadonlyArray<Cause> => {
  const decode = decoders[kind.resource.kind]
  if (decode === undefined) return []
  const result = decode(object)
  return Result.isFailure(result) ? result.failure.errors.map((e) => ({ field: e.path, message: `Invalid value: ${e.message}` })) : []
}
