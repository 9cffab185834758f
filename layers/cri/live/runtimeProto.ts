/**
 * The part of CRI `runtime.v1` (k8s.io/cri-api pkg/apis/runtime/v1/api.proto) that preheat calls:
 * RuntimeService.Version and five ImageService calls. Embedded as text so that the bundle and the
 * single executable read no file at run time.
 *
 * Field numbers are upstream's. Some fields of PodSandboxConfig (which would drag in many more
 * messages) are left out: we never send them, and a field the peer sends that is not declared
 * here is skipped by the decoder. Comments mark the gaps.
 */
export const runtimeProto = `
syntax = "proto3";

package runtime.v1;

service RuntimeService {
  rpc Version(VersionRequest) returns (VersionResponse) {}
}

service ImageService {
  rpc ListImages(ListImagesRequest) returns (ListImagesResponse) {}
  rpc ImageStatus(ImageStatusRequest) returns (ImageStatusResponse) {}
  rpc PullImage(PullImageRequest) returns (PullImageResponse) {}
  rpc RemoveImage(RemoveImageRequest) returns (RemoveImageResponse) {}
  rpc ImageFsInfo(ImageFsInfoRequest) returns (ImageFsInfoResponse) {}
}

message VersionRequest {
  string version = 1;
}

message VersionResponse {
  string version = 1;
  string runtime_name = 2;
  string runtime_version = 3;
  string runtime_api_version = 4;
}

message ImageSpec {
  string image = 1;
  map<string, string> annotations = 2;
  // 3..17 unused upstream
  string user_specified_image = 18;
  string runtime_handler = 19;
}

message Int64Value {
  int64 value = 1;
}

message Image {
  string id = 1;
  repeated string repo_tags = 2;
  repeated string repo_digests = 3;
  uint64 size = 4;
  Int64Value uid = 5;
  string username = 6;
  ImageSpec spec = 7;
  bool pinned = 8;
}

message ImageFilter {
  ImageSpec image = 1;
}

message ListImagesRequest {
  ImageFilter filter = 1;
}

message ListImagesResponse {
  repeated Image images = 1;
}

message ImageStatusRequest {
  ImageSpec image = 1;
  bool verbose = 2;
}

message ImageStatusResponse {
  Image image = 1;
  map<string, string> info = 2;
}

message AuthConfig {
  string username = 1;
  string password = 2;
  string auth = 3;
  string server_address = 4;
  string identity_token = 5;
  string registry_token = 6;
}

message PodSandboxMetadata {
  string name = 1;
  string uid = 2;
  string namespace = 3;
  uint32 attempt = 4;
}

message PodSandboxConfig {
  PodSandboxMetadata metadata = 1;
  string hostname = 2;
  string log_directory = 3;
  // 4 dns_config, 5 port_mappings: not sent
  map<string, string> labels = 6;
  map<string, string> annotations = 7;
  // 8 linux, 9 windows: not sent
}

message PullImageRequest {
  ImageSpec image = 1;
  AuthConfig auth = 2;
  PodSandboxConfig sandbox_config = 3;
}

message PullImageResponse {
  string image_ref = 1;
}

message RemoveImageRequest {
  ImageSpec image = 1;
}

message RemoveImageResponse {}

message ImageFsInfoRequest {}

message UInt64Value {
  uint64 value = 1;
}

message FilesystemIdentifier {
  string mountpoint = 1;
}

message FilesystemUsage {
  int64 timestamp = 1;
  FilesystemIdentifier fs_id = 2;
  UInt64Value used_bytes = 3;
  UInt64Value inodes_used = 4;
}

message ImageFsInfoResponse {
  repeated FilesystemUsage image_filesystems = 1;
  // Where containers' writable layers live when the runtime splits them off (CRI 1.29+).
  repeated FilesystemUsage container_filesystems = 2;
}
`
