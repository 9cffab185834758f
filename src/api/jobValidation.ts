import { Result } from "effect"
import { quoteBounded } from "./goQuote.ts"
import type { ImageListPullJobSpec } from "./imageListPullJob.ts"
import { maxListImages } from "./imageListPullJob.ts"
import type { ImagePullJobSpec } from "./imagePullJob.ts"
import { parseImageReference } from "./imageReference.ts"
import type { FieldError } from "./invalidObject.ts"
import { completionPolicyTypes, deadlineMessage, parallelismMessage } from "./jobTemplate.ts"
import type { ImagePullJobNodeSelector } from "./jobTemplate.ts"
import { validateLabelSelector } from "./labelSelector.ts"
import { isValidParallelism } from "./parallelism.ts"
import { pullPolicyConflictMessage } from "./pullPolicySpelling.ts"

type JobTemplate = Omit<ImagePullJobSpec, "image">

const hasLabels = (s: ImagePullJobNodeSelector): boolean =>
  Object.keys(s.matchLabels ?? {}).length > 0 || (s.matchExpressions ?? []).length > 0

const duplicates = (items: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...new Set(items.filter((item, i) => items.indexOf(item) !== i))
]

/** Upstream's ImagePullJob rules (SPEC §1), every one checked so all are reported together. */
const validateJobTemplate = (spec: JobTemplate): ReadonlyArray<FieldError> => {
  const errors: Array<FieldError> = []
  const { completionPolicy, podSelector, selector } = spec
  if (selector !== undefined) {
    const names = selector.names ?? []
    if (names.length > 0 && hasLabels(selector)) {
      errors.push({ path: "spec.selector", message: "can not set both names and labelSelector in this spec.selector" })
    }
    if (duplicates(names).length > 0) {
      errors.push({ path: "spec.selector.names", message: "duplicated name in selector names" })
    }
    for (const why of validateLabelSelector(selector)) {
      errors.push({ path: "spec.selector", message: `invalid selector: ${why}` })
    }
  }
  if (podSelector !== undefined) {
    if (selector !== undefined) errors.push({ path: "spec", message: "can not set both selector and podSelector" })
    for (const why of validateLabelSelector(podSelector)) {
      errors.push({ path: "spec.podSelector", message: `invalid podSelector: ${why}` })
    }
  }
  const { imagePullPolicy, pullPolicy } = spec
  if (imagePullPolicy !== undefined && pullPolicy.type !== undefined && pullPolicy.type !== imagePullPolicy) {
    errors.push({ path: "spec.pullPolicy.type", message: pullPolicyConflictMessage(pullPolicy.type, imagePullPolicy) })
  }
  if (!isValidParallelism(spec.parallelism)) errors.push({ path: "spec.parallelism", message: parallelismMessage })
  if (!(completionPolicyTypes as ReadonlyArray<string>).includes(completionPolicy.type)) {
    errors.push({
      path: "spec.completionPolicy.type",
      message: `unknown type of completionPolicy: ${quoteBounded(completionPolicy.type)}`
    })
  }
  const { activeDeadlineSeconds, ttlSecondsAfterFinished } = completionPolicy
  if (completionPolicy.type !== "Always" && (activeDeadlineSeconds !== undefined || ttlSecondsAfterFinished !== undefined)) {
    errors.push({
      path: "spec.completionPolicy",
      message: "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"
    })
  }
  return errors
}

/** As upstream's ImagePullJob rule: a timeout above the deadline; equal values are fine. An ImageListPullJob's children would be refused. */
const validateDeadline = ({
  completionPolicy,
  pullPolicy
}: Pick<ImagePullJobSpec, "completionPolicy" | "pullPolicy">): ReadonlyArray<FieldError> =>
  completionPolicy.activeDeadlineSeconds !== undefined && completionPolicy.activeDeadlineSeconds < pullPolicy.timeoutSeconds
    ? [{ path: "spec.completionPolicy.activeDeadlineSeconds", message: deadlineMessage }]
    : []

const validateImage = (image: string, path: string): ReadonlyArray<FieldError> => {
  if (image === "") return [{ path, message: "image can not be empty" }]
  return Result.match(parseImageReference(image), {
    onSuccess: () => [],
    onFailure: (invalid) => [{ path, message: invalid.message }]
  })
}

export const validateImagePullJobSpec = (spec: ImagePullJobSpec): ReadonlyArray<FieldError> => [
  ...validateImage(spec.image, "spec.image"),
  ...validateJobTemplate(spec),
  ...validateDeadline(spec)
]

export const validateImageListPullJobSpec = (spec: ImageListPullJobSpec): ReadonlyArray<FieldError> => [
  ...(spec.images.length > maxListImages
    ? [{ path: "spec.images", message: `the maximum number of images cannot > ${maxListImages}` }]
    : []),
  ...(duplicates(spec.images).length > 0 ? [{ path: "spec.images", message: "images cannot have duplicate values" }] : []),
  ...spec.images.flatMap((image, i) => validateImage(image, `spec.images[${i}]`)),
  ...validateJobTemplate(spec),
  ...validateDeadline(spec)
]
