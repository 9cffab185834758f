/**
 * containerd's image metadata service (api/services/images/v1/images.proto and the descriptor of
 * api/types), as far as labels need it: List, and Update with a field mask. Field numbers are
 * containerd's. google.protobuf.Timestamp and FieldMask are declared locally (same fields, so the
 * same wire format) to keep the text self-contained, as in containerdContentProto.ts.
 */
export const containerdImagesProto = `
syntax = "proto3";

package containerd.services.images.v1;

service Images {
  rpc List(ListImagesRequest) returns (ListImagesResponse);
  rpc Update(UpdateImageRequest) returns (UpdateImageResponse);
}

message Timestamp {
  int64 seconds = 1;
  int32 nanos = 2;
}

message FieldMask {
  repeated string paths = 1;
}

message Descriptor {
  string media_type = 1;
  string digest = 2;
  int64 size = 3;
  map<string, string> annotations = 5;
}

message Image {
  string name = 1;
  map<string, string> labels = 2;
  Descriptor target = 3;
  Timestamp created_at = 7;
  Timestamp updated_at = 8;
}

message UpdateImageRequest {
  Image image = 1;
  FieldMask update_mask = 2;
}

message UpdateImageResponse {
  Image image = 1;
}

message ListImagesRequest {
  repeated string filters = 1;
}

message ListImagesResponse {
  repeated Image images = 1;
}
`
