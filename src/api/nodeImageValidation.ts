import { Result } from "effect"
import { quoteBounded } from "./goQuote.ts"
import { parseImageReference, pullReference } from "./imageReference.ts"
import { fieldPath } from "./invalidObject.ts"
import type { FieldError } from "./invalidObject.ts"
import type { NodeImageSpec } from "./nodeImage.ts"
import { maxNodeImages } from "./nodeImage.ts"

/**
 * Upstream's NodeImage rules (SPEC §1), plus a reference check so a bad hand-written task is named.
 * Names and tags are the user's words: quoted (goQuote.ts), as the CRD rules quote them.
 */
export const validateNodeImageSpec = (spec: NodeImageSpec): ReadonlyArray<FieldError> => {
  const images = Object.entries(spec.images ?? {})
  const errors: Array<FieldError> = []
  if (images.length > maxNodeImages) {
    errors.push({
      path: "spec.images",
      message: `spec images length ${images.length} can not be more than ${maxNodeImages}`
    })
  }
  for (const [name, image] of images) {
    if (name === "") {
      errors.push({ path: "spec.images", message: "image name can not be empty" })
      continue
    }
    const seen = new Set<string>()
    image.tags.forEach((spec, i) => {
      const path = fieldPath(["spec", "images", name, "tags", i])
      if (spec.tag === "") {
        errors.push({ path: `${path}.tag`, message: `tag for image ${quoteBounded(name)} can not be empty` })
        return
      }
      if (seen.has(spec.tag)) {
        errors.push({ path: `${path}.tag`, message: `duplicated tag ${quoteBounded(spec.tag)} for image ${quoteBounded(name)}` })
      }
      seen.add(spec.tag)
      if (spec.version < 0) {
        errors.push({ path: `${path}.version`, message: `version for ${quoteBounded(`${name}:${spec.tag}`)} can not be less than 0` })
      }
      const reference = pullReference({ name, tag: spec.tag })
      const parsed = parseImageReference(reference)
      if (Result.isFailure(parsed)) {
        errors.push({ path: `${path}.tag`, message: parsed.failure.message })
      }
    })
  }
  return errors
}
