/**
 * The part of containerd's own API (same socket as CRI) that byte progress needs: in-flight ingests
 * and committed blobs (content.v1), and the lease each pull is made under (leases.v1). Field numbers are
 * containerd's api/services/{content,leases}/v1. Every call needs the `containerd-namespace`
 * metadata header (`k8s.io` for what CRI pulls).
 *
 * google.protobuf.Timestamp is declared locally (same fields, so the same wire format) to keep the
 * text self-contained: no imports to resolve at run time.
 */
export const containerdContentProto = `
syntax = "proto3";

package containerd.services.content.v1;

service Content {
  rpc Info(InfoRequest) returns (InfoResponse);
  rpc Read(ReadContentRequest) returns (stream ReadContentResponse);
  rpc ListStatuses(ListStatusesRequest) returns (ListStatusesResponse);
}

message Timestamp {
  int64 seconds = 1;
  int32 nanos = 2;
}

message Info {
  string digest = 1;
  int64 size = 2;
  Timestamp created_at = 3;
  Timestamp updated_at = 4;
  map<string, string> labels = 5;
}

message InfoRequest {
  string digest = 1;
}

message InfoResponse {
  Info info = 1;
}

message ReadContentRequest {
  string digest = 1;
  int64 offset = 2;
  int64 size = 3;
}

message ReadContentResponse {
  int64 offset = 1;
  bytes data = 2;
}

message Status {
  Timestamp started_at = 1;
  Timestamp updated_at = 2;
  string ref = 3;
  int64 offset = 4;
  int64 total = 5;
  string expected = 6;
}

message ListStatusesRequest {
  repeated string filters = 1;
}

message ListStatusesResponse {
  repeated Status statuses = 1;
}
`

export const containerdLeasesProto = `
syntax = "proto3";

package containerd.services.leases.v1;

service Leases {
  rpc Create(CreateRequest) returns (CreateResponse);
  rpc Delete(DeleteRequest) returns (Empty);
  rpc List(ListRequest) returns (ListResponse);
  rpc ListResources(ListResourcesRequest) returns (ListResourcesResponse);
}

message Empty {}

message Timestamp {
  int64 seconds = 1;
  int32 nanos = 2;
}

message Lease {
  string id = 1;
  Timestamp created_at = 2;
  map<string, string> labels = 3;
}

message CreateRequest {
  string id = 1;
  map<string, string> labels = 3;
}

message CreateResponse {
  Lease lease = 1;
}

message DeleteRequest {
  string id = 1;
  bool sync = 2;
}

message ListRequest {
  repeated string filters = 1;
}

message ListResponse {
  repeated Lease leases = 1;
}

message Resource {
  string id = 1;
  // "content", "ingests" or "snapshots/<snapshotter>"
  string type = 2;
}

message ListResourcesRequest {
  string id = 1;
}

message ListResourcesResponse {
  repeated Resource resources = 1;
}
`
