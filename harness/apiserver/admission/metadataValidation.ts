import { validateLabelValue, validateQualifiedName } from "../../../src/api/objectNames.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { JsonObject } from "../../../src/json/plainObject.ts"
import { quote } from "../storage/storeErrors.ts"
import type { Cause } from "../storage/storeErrors.ts"

/** ObjectMeta's own validation (labels, annotations, finalizers, ownerReferences), as apimachinery words it. */
export const metadataCauses = (meta: JsonObject): Array<Cause> => {
  const causes: Array<Cause> = []
  const stringMap = (field: "labels" | "annotations") => {
    const map = meta[field]
    if (map === undefined || map === null) return
    if (!isPlainObject(map)) {
      causes.push({ field: `metadata.${field}`, message: `Invalid value: ${quote(map)}: must be a map of strings` })
      return
    }
    for (const [key, value] of Object.entries(map)) {
      for (const msg of validateQualifiedName(key)) {
        causes.push({ field: `metadata.${field}`, message: `Invalid value: ${quote(key)}: ${msg}` })
      }
      if (typeof value !== "string") {
        causes.push({ field: `metadata.${field}.${key}`, message: `Invalid value: ${quote(value)}: must be a string` })
      } else if (field === "labels") {
        for (const msg of validateLabelValue(value)) {
          causes.push({ field: "metadata.labels", message: `Invalid value: ${quote(value)}: ${msg}` })
        }
      }
    }
  }
  stringMap("labels")
  stringMap("annotations")
  const finalizers = meta["finalizers"]
  if (
    finalizers !== undefined &&
    finalizers !== null &&
    (!Array.isArray(finalizers) || finalizers.some((f) => typeof f !== "string" || f === ""))
  ) {
    causes.push({ field: "metadata.finalizers", message: `Invalid value: ${quote(finalizers)}: must be a list of names` })
  }
  const owners = meta["ownerReferences"]
  if (owners !== undefined && owners !== null) {
    if (!Array.isArray(owners)) {
      causes.push({ field: "metadata.ownerReferences", message: `Invalid value: ${quote(owners)}: must be a list` })
    } else {
      owners.forEach((ref: unknown, i) => {
        for (const field of ["apiVersion", "kind", "name", "uid"]) {
          const value = isPlainObject(ref) ? ref[field] : undefined
          if (typeof value !== "string" || value === "") {
            causes.push({ field: `metadata.ownerReferences[${i}].${field}`, message: `Required value: ${field} must not be empty` })
          }
        }
      })
      if (owners.filter((ref) => isPlainObject(ref) && ref.controller === true).length > 1) {
        causes.push({
          field: "metadata.ownerReferences",
          message: "Invalid value: Only one reference can have Controller set to true"
        })
      }
    }
  }
  return causes
}
