import { Result, Schema, SchemaIssue } from "effect"
import { AdvancedCronJob } from "./advancedCronJob.ts"
import { validateAdvancedCronJob } from "./cronJobValidation.ts"
import { ImageListPullJob } from "./imageListPullJob.ts"
import { ImagePullJob } from "./imagePullJob.ts"
import { fieldPath, InvalidObject } from "./invalidObject.ts"
import type { FieldError } from "./invalidObject.ts"
import { validateImageListPullJobSpec, validateImagePullJobSpec } from "./jobValidation.ts"
import { NodeImage } from "./nodeImage.ts"
import { validateNodeImageSpec } from "./nodeImageValidation.ts"

const toFieldErrors = SchemaIssue.makeFormatterStandardSchemaV1()

const nameOf = (input: unknown): string => {
  const metadata = typeof input === "object" && input !== null ? (input as { metadata?: unknown }).metadata : undefined
  const name = typeof metadata === "object" && metadata !== null ? (metadata as { name?: unknown }).name : undefined
  return typeof name === "string" ? name : ""
}

/**
 * Decodes an object of one kind: first its shape (types, required fields, defaults), then the
 * rules across fields. Shape errors come all together; rules run only on a well-shaped object.
 * Never throws: any input gives a value or an InvalidObject.
 */
const objectDecoder = <S extends Schema.Top & { readonly DecodingServices: never }>(
  kind: string,
  schema: S,
  validate: (value: S["Type"]) => ReadonlyArray<FieldError>
) => {
  const decode = Schema.decodeUnknownResult(schema, { errors: "all" })
  return (input: unknown): Result.Result<S["Type"], InvalidObject> => {
    const decoded = decode(input)
    if (Result.isFailure(decoded)) {
      const errors = toFieldErrors(decoded.failure.issue).issues.map((issue) => ({
        path: fieldPath(issue.path as ReadonlyArray<PropertyKey>),
        message: issue.message
      }))
      return Result.fail(new InvalidObject({ kind, name: nameOf(input), errors }))
    }
    const errors = validate(decoded.success)
    return errors.length === 0 ? Result.succeed(decoded.success) : Result.fail(new InvalidObject({ kind, name: nameOf(input), errors }))
  }
}

export const decodeImagePullJob = objectDecoder("ImagePullJob", ImagePullJob, (job) => validateImagePullJobSpec(job.spec))

export const decodeImageListPullJob = objectDecoder("ImageListPullJob", ImageListPullJob, (job) => validateImageListPullJobSpec(job.spec))

export const decodeNodeImage = objectDecoder("NodeImage", NodeImage, (node) => validateNodeImageSpec(node.spec))

export const decodeAdvancedCronJob = objectDecoder("AdvancedCronJob", AdvancedCronJob, validateAdvancedCronJob)
