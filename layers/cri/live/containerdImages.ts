import * as grpc from "@grpc/grpc-js"
import { Duration, Effect } from "effect"
import { type GrpcCallFailed, isGrpcCode, unary } from "./grpcCalls.ts"
import { redact } from "./grpcErrors.ts"
import type { ListContainerdImagesResponse } from "./grpcPackages.ts"
import { ImageLabels, ImageLabelsFailed, type ImageLabelsError, ImageLabelsUnsupported } from "../../../src/cri/ImageLabels.ts"

/** containerd keeps what CRI pulls, and the labels the kubelet reads through CRI, in this namespace. */
const criNamespace = "k8s.io"
/** Metadata calls answer in milliseconds; a node with thousands of images lists in well under this. */
const timeout = Duration.seconds(10)
const options = { timeout, namespace: criNamespace }

/**
 * A runtime on the socket that is not containerd (CRI-O, cri-dockerd) has no such service: gRPC
 * UNIMPLEMENTED. That is a fact about the node, not a passing failure.
 */
const labelsError =
  (method: string) =>
  (error: GrpcCallFailed): ImageLabelsError => {
    if (isGrpcCode(error, grpc.status.UNIMPLEMENTED)) {
      return new ImageLabelsUnsupported({ message: `the runtime has no containerd images service (${method}: UNIMPLEMENTED)` })
    }
    const text = error.details ?? error.text
    return new ImageLabelsFailed({ message: `containerd images ${method}: ${redact(text)}` })
  }

/**
 * Image labels over containerd's own images service on the CRI socket. Update carries a field mask
 * of `labels.<key>` paths: containerd then touches only those labels, and a masked key absent from
 * the message is removed (how `ctr images label NAME key=` clears one).
 */
export const containerdImageLabels = (images: grpc.Client): ImageLabels["Service"] =>
  ImageLabels.of({
    list: unary<ListContainerdImagesResponse>(images, "List", {}, options).pipe(
      Effect.map((response) => response.images.map((image) => ({ name: image.name, labels: image.labels }))),
      Effect.mapError(labelsError("List"))
    ),
    setLabels: (name, labels) => {
      const set = Object.fromEntries(Object.entries(labels).filter((entry): entry is [string, string] => entry[1] !== undefined))
      const request = { image: { name, labels: set }, update_mask: { paths: Object.keys(labels).map((key) => `labels.${key}`) } }
      return unary<unknown>(images, "Update", request, options).pipe(
        Effect.asVoid,
        // Removed (by the kubelet's GC, say) between our listing and this update: nothing to label.
        Effect.catchIf(
          (error) => isGrpcCode(error, grpc.status.NOT_FOUND),
          () => Effect.void
        ),
        Effect.mapError(labelsError("Update"))
      )
    }
  })
