import { Effect, Schema } from "effect"

/**
 * OpenAPI keywords that have no Schema equivalent (CEL rules, int-or-string, list types) ride
 * on this annotation so the CRD generator reads everything from the one Schema.
 */
export interface OpenApiExtras {
  readonly "x-kubernetes-validations"?: ReadonlyArray<CelRule>
  readonly "x-kubernetes-int-or-string"?: true
  readonly "x-kubernetes-preserve-unknown-fields"?: true
  readonly "x-kubernetes-list-type"?: "atomic" | "set" | "map"
  readonly "x-kubernetes-map-type"?: "atomic" | "granular"
  readonly maxItems?: number
  readonly maxLength?: number
  readonly maxProperties?: number
  readonly format?: string
  readonly enum?: ReadonlyArray<string>
}

/** A CRD validation rule as the API server evaluates it. */
export interface CelRule {
  readonly rule: string
  readonly message?: string
  readonly messageExpression?: string
  readonly fieldPath?: string
  readonly reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate"
}

export const openApiKey = "preheat/openapi"

/** The API versions served, oldest first; the last is the storage version (as upstream). */
export const apiVersions = ["v1alpha1", "v1beta1"] as const
export type ApiVersionName = (typeof apiVersions)[number]

export const servedFromKey = "preheat/servedFrom"

/** A field only the CRD's schema of this version and later ones have (the decoder reads it in any). */
export const servedFrom =
  (version: ApiVersionName) =>
  <S extends Schema.Top>(schema: S): S["Rebuild"] =>
    schema.annotate({ [servedFromKey]: version } as Schema.Annotations.Bottom<S["Type"], S["~type.parameters"]>)

export const withOpenApi =
  (extras: OpenApiExtras) =>
  <S extends Schema.Top>(schema: S): S["Rebuild"] =>
    schema.annotate({ [openApiKey]: extras } as Schema.Annotations.Bottom<S["Type"], S["~type.parameters"]>)

/**
 * A field the decoder fills in when absent, exactly as the API server's structural defaulting
 * would from the generated CRD (the default is recorded for the generator).
 */
export const withDefault =
  <S extends Schema.Top & { readonly DecodingServices: never }>(value: S["Encoded"]) =>
  (schema: S) =>
    Schema.withDecodingDefaultKey<S>(Effect.succeed(value))(
      schema.annotate({ default: value } as Schema.Annotations.Bottom<S["Type"], S["~type.parameters"]>) as S
    )

export const described =
  (description: string) =>
  <S extends Schema.Top>(schema: S): S["Rebuild"] =>
    schema.annotate({ description } as Schema.Annotations.Bottom<S["Type"], S["~type.parameters"]>)

/** RFC 3339 time as the API server writes it; kept a string so objects round-trip byte for byte. */
export const Timestamp = Schema.String.pipe(withOpenApi({ format: "date-time" }))

/**
 * One bound per numeric field, the same in the CRD (minimum/maximum, which kube-apiserver enforces;
 * it does not check `format: int32` ranges), in admission and in every decoder. Upstream's int32
 * fields end at Go's int32: its controller could not read a larger value either.
 */
export const maxInt32 = 2_147_483_647
/**
 * Upstream's int64 fields (activeDeadlineSeconds, versions, generations) end at the largest
 * integer JavaScript holds exactly: the controller and the daemon read every value admitted.
 */
export const maxInt64 = Number.MAX_SAFE_INTEGER

const int32 = withOpenApi({ format: "int32" })
const int64 = withOpenApi({ format: "int64" })

export const NonNegativeInt32 = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(maxInt32)).pipe(int32)
export const PositiveInt32 = Schema.Int.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(maxInt32)).pipe(int32)
export const NonNegativeInt64 = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(maxInt64)).pipe(int64)
export const PositiveInt64 = Schema.Int.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(maxInt64)).pipe(int64)
/** An int64 that may be negative in the decoder, so validation can name it (NodeImage tag versions). */
export const Int64 = Schema.Int.check(Schema.isGreaterThanOrEqualTo(-maxInt64), Schema.isLessThanOrEqualTo(maxInt64)).pipe(int64)

export const StringMap = Schema.Record(Schema.String, Schema.String)

/** A status counter: a non-negative integer, 0 until first written. */
export const counter = (description: string) => NonNegativeInt32.pipe(described(description), withDefault(0))
