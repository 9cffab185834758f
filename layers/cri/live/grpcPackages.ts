import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import protobuf from "protobufjs"
import { containerdContentProto, containerdLeasesProto } from "./containerdContentProto.ts"
import { containerdImagesProto } from "./containerdImagesProto.ts"
import { runtimeProto } from "./runtimeProto.ts"

/**
 * gRPC client constructors built from the embedded .proto texts: parse with protobufjs, hand the
 * JSON form to proto-loader (which knows nothing of files then), load into grpc-js. Nothing is read
 * from disk, so this works in the esbuild bundle, the single executable and Deno alike.
 *
 * Messages keep proto field names (snake_case); 64-bit integers arrive as JS numbers (sizes stay
 * far below 2^53); absent scalars and lists arrive as their defaults, absent messages as null.
 */
const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true
}

const load = (text: string): grpc.GrpcObject =>
  grpc.loadPackageDefinition(protoLoader.fromJSON(protobuf.parse(text, { keepCase: true }).root.toJSON(), loaderOptions))

const service = (root: grpc.GrpcObject, path: string): grpc.ServiceClientConstructor => {
  let node: unknown = root
  for (const part of path.split(".")) node = (node as Record<string, unknown>)[part]
  if (typeof node !== "function") throw new Error(`embedded proto has no service ${path}`)
  return node as grpc.ServiceClientConstructor
}

export interface ServiceConstructors {
  readonly runtimeService: grpc.ServiceClientConstructor
  readonly imageService: grpc.ServiceClientConstructor
  readonly content: grpc.ServiceClientConstructor
  readonly leases: grpc.ServiceClientConstructor
  readonly images: grpc.ServiceClientConstructor
}

/**
 * Parses the protos: a few ms, paid once by each connection to a runtime (which keeps the result),
 * never by a CLI command without CRI.
 */
export const loadServiceConstructors = (): ServiceConstructors => {
  const runtime = load(runtimeProto)
  const content = load(containerdContentProto)
  const leases = load(containerdLeasesProto)
  const images = load(containerdImagesProto)
  return {
    runtimeService: service(runtime, "runtime.v1.RuntimeService"),
    imageService: service(runtime, "runtime.v1.ImageService"),
    content: service(content, "containerd.services.content.v1.Content"),
    leases: service(leases, "containerd.services.leases.v1.Leases"),
    images: service(images, "containerd.services.images.v1.Images")
  }
}

// --- message shapes, as the loader options above produce them -----------------------------------

export interface VersionResponse {
  readonly version: string
  readonly runtime_name: string
  readonly runtime_version: string
  readonly runtime_api_version: string
}

export interface ImageMessage {
  readonly id: string
  readonly repo_tags: ReadonlyArray<string>
  readonly repo_digests: ReadonlyArray<string>
  readonly size: number
}

export interface ImageStatusResponse {
  readonly image: ImageMessage | null
}

export interface ListImagesResponse {
  readonly images: ReadonlyArray<ImageMessage>
}

export interface PullImageResponse {
  readonly image_ref: string
}

export interface FilesystemUsageMessage {
  readonly fs_id: { readonly mountpoint: string } | null
  readonly used_bytes: { readonly value: number } | null
  readonly inodes_used: { readonly value: number } | null
}

export interface ImageFsInfoResponse {
  readonly image_filesystems: ReadonlyArray<FilesystemUsageMessage>
}

export interface ProtoTimestamp {
  readonly seconds: number
  readonly nanos: number
}

export interface ContentInfo {
  readonly digest: string
  readonly size: number
  /** Null when the runtime left it out. */
  readonly created_at: ProtoTimestamp | null
  readonly labels: Readonly<Record<string, string>>
}

export interface InfoResponse {
  readonly info: ContentInfo | null
}

export interface ReadContentResponse {
  readonly offset: number
  readonly data: Buffer
}

export interface IngestStatus {
  readonly ref: string
  readonly offset: number
  readonly total: number
  readonly expected: string
}

export interface ListStatusesResponse {
  readonly statuses: ReadonlyArray<IngestStatus>
}

export interface LeaseMessage {
  readonly id: string
  readonly labels: Readonly<Record<string, string>>
}

export interface ListLeasesResponse {
  readonly leases: ReadonlyArray<LeaseMessage>
}

export interface LeaseResource {
  readonly id: string
  readonly type: string
}

export interface ListResourcesResponse {
  readonly resources: ReadonlyArray<LeaseResource>
}

export interface ContainerdImageMessage {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
}

export interface ListContainerdImagesResponse {
  readonly images: ReadonlyArray<ContainerdImageMessage>
}
