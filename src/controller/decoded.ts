import type { Result } from "effect"
import type { AdvancedCronJob } from "../api/advancedCronJob.ts"
import { decodeAdvancedCronJob, decodeImageListPullJob, decodeImagePullJob } from "../api/decode.ts"
import type { ImageListPullJob } from "../api/imageListPullJob.ts"
import type { ImagePullJob } from "../api/imagePullJob.ts"
import type { InvalidObject } from "../api/invalidObject.ts"
import type { KubeObject } from "../kube/KubeApi.ts"

/** Decoding is cached per stored object: stores replace objects on change and never mutate them. */
const memo = <A>(decode: (input: unknown) => Result.Result<A, InvalidObject>) => {
  const cache = new WeakMap<KubeObject, Result.Result<A, InvalidObject>>()
  return (object: KubeObject): Result.Result<A, InvalidObject> => {
    let result = cache.get(object)
    if (result === undefined) cache.set(object, (result = decode(object)))
    return result
  }
}

export const decodedJob: (object: KubeObject) => Result.Result<ImagePullJob, InvalidObject> = memo(decodeImagePullJob)
export const decodedListJob: (object: KubeObject) => Result.Result<ImageListPullJob, InvalidObject> = memo(decodeImageListPullJob)
export const decodedCronJob: (object: KubeObject) => Result.Result<AdvancedCronJob, InvalidObject> = memo(decodeAdvancedCronJob)
