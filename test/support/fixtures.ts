import { Result } from "effect"
import { decodeImagePullJob, decodeNodeImage } from "../../src/api/decode.ts"
import type { ImagePullJob } from "../../src/api/imagePullJob.ts"
import type { ImageTagStatus, NodeImage } from "../../src/api/nodeImage.ts"

const successOf = <A>(result: Result.Result<A, { readonly message: string }>): A => {
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success
}

export const jobUid = "uid-job-1"

export const makeJob = (spec: Record<string, unknown>, extra: { status?: unknown; uid?: string } = {}): ImagePullJob =>
  successOf(
    decodeImagePullJob({
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImagePullJob",
      metadata: { name: "job-1", namespace: "default", uid: extra.uid ?? jobUid, generation: 1 },
      spec,
      ...(extra.status === undefined ? {} : { status: extra.status })
    })
  )

export const makeNodeImage = (
  name: string,
  options: {
    readonly labels?: Record<string, string>
    readonly images?: Record<string, unknown>
    readonly statuses?: Record<string, ReadonlyArray<Omit<Partial<ImageTagStatus>, "phase"> & { tag: string; phase: string }>>
  } = {}
): NodeImage =>
  successOf(
    decodeNodeImage({
      metadata: { name, labels: options.labels ?? {} },
      spec: options.images === undefined ? {} : { images: options.images },
      ...(options.statuses === undefined
        ? {}
        : {
            status: {
              imageStatuses: Object.fromEntries(Object.entries(options.statuses).map(([k, tags]) => [k, { tags }]))
            }
          })
    })
  )
