import { Schema } from "effect"
import { described, NonNegativeInt64, StringMap, Timestamp, withOpenApi } from "./schemaExtras.ts"

export const group = "apps.kruise.io"
export const apiVersion = `${group}/v1alpha1`

const OwnerReference = Schema.Struct({
  apiVersion: Schema.String,
  kind: Schema.String,
  name: Schema.String,
  uid: Schema.String,
  controller: Schema.optionalKey(Schema.Boolean),
  blockOwnerDeletion: Schema.optionalKey(Schema.Boolean)
})
export type OwnerReference = typeof OwnerReference.Type

/**
 * The metadata fields the code reads or writes. Fields the API server owns and we never touch
 * (managedFields, ...) are kept as they came, so an update never drops them.
 */
export const ObjectMeta = Schema.StructWithRest(
  Schema.Struct({
    name: Schema.optionalKey(Schema.String),
    generateName: Schema.optionalKey(Schema.String),
    namespace: Schema.optionalKey(Schema.String),
    uid: Schema.optionalKey(Schema.String),
    resourceVersion: Schema.optionalKey(Schema.String),
    generation: Schema.optionalKey(NonNegativeInt64),
    creationTimestamp: Schema.optionalKey(Timestamp),
    deletionTimestamp: Schema.optionalKey(Timestamp),
    labels: Schema.optionalKey(StringMap),
    annotations: Schema.optionalKey(StringMap),
    finalizers: Schema.optionalKey(Schema.Array(Schema.String)),
    ownerReferences: Schema.optionalKey(Schema.Array(OwnerReference))
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type ObjectMeta = typeof ObjectMeta.Type

/** A reference to a job that asked for a tag; the uid tells a re-created job from the old one. */
export const ObjectReference = Schema.Struct({
  apiVersion: Schema.optionalKey(Schema.String).pipe(described("API version of the referent.")),
  kind: Schema.optionalKey(Schema.String).pipe(described("Kind of the referent, e.g. ImagePullJob.")),
  name: Schema.optionalKey(Schema.String).pipe(described("Name of the referent.")),
  namespace: Schema.optionalKey(Schema.String).pipe(described("Namespace of the referent.")),
  uid: Schema.optionalKey(Schema.String).pipe(described("UID of the referent.")),
  // The rest of core/v1 ObjectReference, accepted as upstream's schema does; unused here.
  resourceVersion: Schema.optionalKey(Schema.String).pipe(described("Specific resourceVersion to which this reference is made, if any.")),
  fieldPath: Schema.optionalKey(Schema.String).pipe(
    described("If referring to a piece of an object instead of an entire object, the field, e.g. spec.containers{name}.")
  )
  // Replaced whole by server-side apply, as core/v1 ObjectReference (+structType=atomic) in upstream's CRDs.
}).pipe(withOpenApi({ "x-kubernetes-map-type": "atomic" }))
export type ObjectReference = typeof ObjectReference.Type

/** metav1.Condition, the standard shape kubectl and `kubectl wait --for=condition=` understand. */
export const Condition = Schema.Struct({
  type: Schema.String.pipe(described("Type of the condition, e.g. Valid, Complete.")),
  status: Schema.Literals(["True", "False", "Unknown"]).pipe(described("Status of the condition: True, False or Unknown.")),
  reason: Schema.optionalKey(Schema.String).pipe(described("One-word CamelCase reason for the last transition.")),
  message: Schema.optionalKey(Schema.String).pipe(described("Human-readable details of the last transition.")),
  lastTransitionTime: Schema.optionalKey(Timestamp).pipe(described("When the status last changed.")),
  observedGeneration: Schema.optionalKey(NonNegativeInt64).pipe(described("The metadata.generation the condition was set for."))
})
export type Condition = typeof Condition.Type
