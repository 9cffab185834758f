import { Context, Data } from "effect"
import type { Effect } from "effect"

/** One image record of the runtime's metadata store: containerd keeps one per name (tag, digest, id). */
export interface ImageRecord {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
}

/** The runtime has no image metadata service with labels (CRI-O, cri-dockerd): pinning is a no-op there. */
export class ImageLabelsUnsupported extends Data.TaggedError("ImageLabelsUnsupported")<{ readonly message: string }> {}

/** A call to the image metadata service failed (runtime restarting, deadline, ...): try again later. */
export class ImageLabelsFailed extends Data.TaggedError("ImageLabelsFailed")<{ readonly message: string }> {}

export type ImageLabelsError = ImageLabelsUnsupported | ImageLabelsFailed

/**
 * Labels on the runtime's image records, as containerd's images service (containerd.services.images.v1,
 * namespace k8s.io, the same socket as CRI) keeps them. CRI itself cannot set labels; the kubelet's
 * image garbage collection reads containerd's `io.cri-containerd.pinned` label through CRI's
 * `Image.pinned`. Live body: grpc-js (layers/cri/live/containerdImages.ts); simulated body: harness/layers/simulatedRuntime/.
 */
export class ImageLabels extends Context.Service<
  ImageLabels,
  {
    /** Every image record with its labels. */
    readonly list: Effect.Effect<ReadonlyArray<ImageRecord>, ImageLabelsError>
    /**
     * Sets (a value) or removes (undefined) the named labels of one record, leaving its other labels
     * alone. A record that is gone by then is skipped: there is nothing left to label.
     */
    readonly setLabels: (name: string, labels: Readonly<Record<string, string | undefined>>) => Effect.Effect<void, ImageLabelsError>
  }
>()("preheat/cri/ImageLabels") {}
