import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Option } from "effect"
import type { ContainerdApi } from "./containerdProgress.ts"
import { isGrpcCode, serverStream, unary } from "./grpcCalls.ts"
import type { InfoResponse, ListLeasesResponse, ListResourcesResponse, ListStatusesResponse, ReadContentResponse } from "./grpcPackages.ts"
import type { LeaseApi } from "./pullLeases.ts"

/** containerd keeps what CRI pulls in this namespace. */
const criNamespace = "k8s.io"
/** Local calls that answer in milliseconds; a reading that takes longer is skipped. */
const timeout = Duration.seconds(5)
const options = { timeout, namespace: criNamespace }

/** containerd's lease and content services (same socket as CRI) as the progress tracker reads them. */
export const containerdApi = (content: grpc.Client, leases: grpc.Client): ContainerdApi => ({
  leaseResources: (id) =>
    Effect.map(unary<ListResourcesResponse>(leases, "ListResources", { id }, options), (response) => response.resources),
  ingests: Effect.map(unary<ListStatusesResponse>(content, "ListStatuses", {}, options), (response) => response.statuses),
  info: (digest) =>
    unary<InfoResponse>(content, "Info", { digest }, options).pipe(
      Effect.map((response) => Option.fromNullishOr(response.info)),
      Effect.catchIf(
        (error) => isGrpcCode(error, grpc.status.NOT_FOUND),
        () => Effect.succeed(Option.none())
      )
    ),
  read: (digest) =>
    Effect.map(serverStream<ReadContentResponse>(content, "Read", { digest }, options), (chunks) =>
      Buffer.concat(chunks.map((chunk) => chunk.data))
    )
})

/** containerd's lease service as the pulls' leases use it (pullLeases.ts). */
export const containerdLeases = (leases: grpc.Client): LeaseApi => ({
  create: (id, labels) => Effect.asVoid(unary<unknown>(leases, "Create", { id, labels }, options)),
  remove: (id) => Effect.asVoid(unary<unknown>(leases, "Delete", { id, sync: false }, options)),
  list: Effect.map(unary<ListLeasesResponse>(leases, "List", {}, options), (response) => response.leases),
  exists: (id) =>
    unary<unknown>(leases, "ListResources", { id }, options).pipe(
      Effect.as(true),
      Effect.catchIf(
        (error) => isGrpcCode(error, grpc.status.NOT_FOUND),
        () => Effect.succeed(false)
      )
    )
})
