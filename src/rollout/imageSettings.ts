// The --image CONTAINER=IMAGE flags, as `kubectl set image` takes its CONTAINER=IMAGE arguments
// (`*` for every container), except that the image must be a valid reference: it becomes an
// ImagePullJob's spec.image, which the API server would refuse later with less context.
import { Result } from "effect"
import { parseImageReference } from "../api/imageReference.ts"
import { RolloutFlagError } from "./errors.ts"

export interface ImageSetting {
  /** A container or init container name, or `*` for all of them. */
  readonly container: string
  readonly image: string
}

const parseOne = (text: string): Result.Result<ImageSetting, RolloutFlagError> => {
  const eq = text.indexOf("=")
  const container = eq < 0 ? "" : text.slice(0, eq)
  const image = eq < 0 ? "" : text.slice(eq + 1)
  if (container === "" || image === "") {
    return Result.fail(new RolloutFlagError({ message: `--image takes CONTAINER=IMAGE, got "${text}"` }))
  }
  const reference = parseImageReference(image)
  if (Result.isFailure(reference)) return Result.fail(new RolloutFlagError({ message: reference.failure.message }))
  return Result.succeed({ container, image })
}

/** Every --image, in order; a container named twice is refused (kubectl would silently take the last). */
export const parseImageSettings = (texts: ReadonlyArray<string>): Result.Result<ReadonlyArray<ImageSetting>, RolloutFlagError> => {
  const settings: Array<ImageSetting> = []
  for (const text of texts) {
    const parsed = parseOne(text)
    if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
    if (settings.some((s) => s.container === parsed.success.container)) {
      return Result.fail(new RolloutFlagError({ message: `--image names container "${parsed.success.container}" twice` }))
    }
    settings.push(parsed.success)
  }
  return settings.length === 0
    ? Result.fail(new RolloutFlagError({ message: "at least one --image CONTAINER=IMAGE is required" }))
    : Result.succeed(settings)
}
