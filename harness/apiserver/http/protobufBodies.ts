// Request bodies in Kubernetes' protobuf encoding. kubectl's typed commands (`kubectl create
// namespace`, `kubectl create secret ...`) send their object as protobuf, with no fallback to
// JSON, so the built-in kinds those commands create are decoded here, from the subset of
// k8s.io/api's generated.proto that they use (and the access reviews of `kubectl auth can-i`).
// Other kinds answer 415.
import protobuf from "protobufjs"

const proto = `
syntax = "proto2";
package k8s;

message Unknown {
  optional TypeMeta typeMeta = 1;
  optional bytes raw = 2;
  optional string contentEncoding = 3;
  optional string contentType = 4;
}
message TypeMeta {
  optional string apiVersion = 1;
  optional string kind = 2;
}
message Time {
  optional int64 seconds = 1;
  optional int32 nanos = 2;
}
message OwnerReference {
  optional string kind = 1;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional bool controller = 6;
  optional bool blockOwnerDeletion = 7;
}
message ObjectMeta {
  optional string name = 1;
  optional string generateName = 2;
  optional string namespace = 3;
  optional string selfLink = 4;
  optional string uid = 5;
  optional string resourceVersion = 6;
  optional int64 generation = 7;
  optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9;
  optional int64 deletionGracePeriodSeconds = 10;
  map<string, string> labels = 11;
  map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13;
  repeated string finalizers = 14;
}
message NamespaceSpec {
  repeated string finalizers = 1;
}
message NamespaceStatus {
  optional string phase = 1;
}
message Namespace {
  optional ObjectMeta metadata = 1;
  optional NamespaceSpec spec = 2;
  optional NamespaceStatus status = 3;
}
message Secret {
  optional ObjectMeta metadata = 1;
  map<string, bytes> data = 2;
  optional string type = 3;
  map<string, string> stringData = 4;
  optional bool immutable = 5;
}
message ConfigMap {
  optional ObjectMeta metadata = 1;
  map<string, string> data = 2;
  map<string, bytes> binaryData = 3;
  optional bool immutable = 4;
}
message ResourceAttributes {
  optional string namespace = 1;
  optional string verb = 2;
  optional string group = 3;
  optional string version = 4;
  optional string resource = 5;
  optional string subresource = 6;
  optional string name = 7;
}
message NonResourceAttributes {
  optional string path = 1;
  optional string verb = 2;
}
message SelfSubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1;
  optional NonResourceAttributes nonResourceAttributes = 2;
}
message SelfSubjectAccessReview {
  optional ObjectMeta metadata = 1;
  optional SelfSubjectAccessReviewSpec spec = 2;
}
message SelfSubjectRulesReviewSpec {
  optional string namespace = 1;
}
message SelfSubjectRulesReview {
  optional ObjectMeta metadata = 1;
  optional SelfSubjectRulesReviewSpec spec = 2;
}
`

const root = protobuf.parse(proto, { keepCase: true }).root
const envelope = root.lookupType("k8s.Unknown")
const kinds: Readonly<Record<string, protobuf.Type>> = {
  "v1/Namespace": root.lookupType("k8s.Namespace"),
  "v1/Secret": root.lookupType("k8s.Secret"),
  // `kubectl create configmap`: `preheat dev` moves tags in its simulated registry with one.
  "v1/ConfigMap": root.lookupType("k8s.ConfigMap"),
  // `kubectl auth can-i` (and `--list`) send these.
  "authorization.k8s.io/v1/SelfSubjectAccessReview": root.lookupType("k8s.SelfSubjectAccessReview"),
  "authorization.k8s.io/v1/SelfSubjectRulesReview": root.lookupType("k8s.SelfSubjectRulesReview")
}

/** The media type, and the magic number every protobuf body starts with. */
export const protobufMediaType = "application/vnd.kubernetes.protobuf"
const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00])

export class UndecodableProtobuf {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

// Go writes every non-pointer field, so empty strings, lists and maps and zero times are on the
// wire where JSON would omit them (omitempty): dropped here. metav1.Time travels as seconds and
// nanos; JSON has RFC 3339 strings.
const toJson = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(toJson)
  if (typeof value === "string") return value === "" ? undefined : value
  if (typeof value !== "object" || value === null) return value
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  if (keys.length > 0 && keys.every((k) => k === "seconds" || k === "nanos") && "seconds" in record) {
    const seconds = Number(record["seconds"])
    return seconds === 0 ? undefined : new Date(seconds * 1000).toISOString().replace(".000Z", "Z")
  }
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    const converted = toJson(record[key])
    if (converted !== undefined) out[key] = converted
  }
  return Object.keys(out).length === 0 ? undefined : out
}

/** The object a protobuf body carries, as JSON, or why it cannot be read. */
export const decodeProtobufBody = (body: Buffer): Record<string, unknown> | UndecodableProtobuf => {
  if (body.length < 4 || !body.subarray(0, 4).equals(magic))
    return new UndecodableProtobuf("the body lacks the protobuf envelope's magic number")
  try {
    const unknown = envelope.toObject(envelope.decode(body.subarray(4)), { bytes: String }) as {
      typeMeta?: { apiVersion?: string; kind?: string }
      raw?: string
    }
    const apiVersion = unknown.typeMeta?.apiVersion ?? ""
    const kind = unknown.typeMeta?.kind ?? ""
    const type = kinds[`${apiVersion}/${kind}`]
    if (type === undefined) return new UndecodableProtobuf(`protobuf bodies of ${apiVersion}/${kind} are not supported: send JSON`)
    const object = type.toObject(type.decode(Buffer.from(unknown.raw ?? "", "base64")), { longs: Number, bytes: String, defaults: false })
    return { apiVersion, kind, ...(toJson(object) as Record<string, unknown> | undefined) }
  } catch (error) {
    return new UndecodableProtobuf(`the protobuf body could not be decoded: ${(error as Error).message}`)
  }
}
