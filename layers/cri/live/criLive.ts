import * as grpc from "@grpc/grpc-js"
import { Context, Duration, Effect, Exit, Layer, Option } from "effect"
import type { Scope } from "effect"
import { containerdApi, containerdLeases } from "./containerdApi.ts"
import { containerdImageLabels } from "./containerdImages.ts"
import { defaultProgressOptions, makePullTracker } from "./containerdProgress.ts"
import { makePullLeases } from "./pullLeases.ts"
import { pullImageRequest, toImageFsUsage, toImageInfo } from "./criMessages.ts"
import { CriRuntime, type ImageFsUsage, type ImageInfo, type PullRequest, type RuntimeVersion } from "../../../src/cri/CriRuntime.ts"
import type { CriError, RuntimeUnavailable } from "../../../src/cri/errors.ts"
import { FilesystemStats } from "../../../src/cri/FilesystemStats.ts"
import { ImageLabels } from "../../../src/cri/ImageLabels.ts"
import { filesystemStatsAt } from "./filesystemStats.ts"
import { unary } from "./grpcCalls.ts"
import { type CallContext, criErrorFrom, secretsOf } from "./grpcErrors.ts"
import {
  type ImageFsInfoResponse,
  type ImageStatusResponse,
  type ListImagesResponse,
  type PullImageResponse,
  loadServiceConstructors,
  type ServiceConstructors,
  type VersionResponse
} from "./grpcPackages.ts"
import { discoverSocket } from "./socketDiscovery.ts"

export interface CriLiveOptions {
  /** `--runtime-socket`: a path or `unix://` URL, used as given. */
  readonly socket?: string | undefined
  /** Where to look for a runtime socket when none is given (default /var/run; /host/var/run in the DaemonSet). */
  readonly hostRunDir?: string | undefined
  /**
   * `--host-root`: where the node's filesystem is seen from here, for statfs of the image
   * filesystem's mountpoint (default `/`: the daemon runs on the node; `/host` in the DaemonSet).
   */
  readonly hostRoot?: string | undefined
  /** Deadline of every call but PullImage (whose deadline is the request's timeout). Default 30 s. */
  readonly callTimeout?: Duration.Input | undefined
  /** How often containerd is read for byte progress while a pull with `onProgress` runs. Default 1 s. */
  readonly progressInterval?: Duration.Input | undefined
}

/** kubelet's CRI version string; runtimes ignore it but expect something. */
const kubeletApiVersion = "0.1.0"
/** As kubelet: ListImages on a node with many images outgrows gRPC's 4 MiB default. */
const maxMessageBytes = 16 * 1024 * 1024
const probeTimeout = Duration.seconds(2)

const channelOptions: grpc.ChannelOptions = {
  "grpc.max_receive_message_length": maxMessageBytes,
  "grpc.max_send_message_length": maxMessageBytes
}

/** A Version call on a channel of its own, closed afterwards: how discovery asks a socket. */
const probe =
  (constructors: ServiceConstructors) =>
  (target: string): Effect.Effect<VersionResponse, CriError> =>
    Effect.acquireUseRelease(
      Effect.sync(() => new constructors.runtimeService(target, grpc.credentials.createInsecure(), channelOptions)),
      (client) =>
        unary<VersionResponse>(client, "Version", { version: kubeletApiVersion }, { timeout: probeTimeout }).pipe(
          Effect.mapError((error) => criErrorFrom(error, { method: "Version" }))
        ),
      (client) => Effect.sync(() => client.close())
    )

/**
 * The runtime's services on one socket: CRI, and containerd's image labels (see ImageLabels.ts);
 * with them the size of the node's filesystems the runtime names (its image filesystem).
 */
export interface RuntimeServices {
  readonly runtime: CriRuntime["Service"]
  readonly imageLabels: ImageLabels["Service"]
  readonly filesystemStats: FilesystemStats["Service"]
}

/**
 * The live CRI runtime over the socket given or discovered: one channel for every service, closed
 * when the layer's scope closes. Pulls with `onProgress` get byte progress from containerd's own
 * API on the same socket (see containerdProgress.ts); other runtimes report 0, then 100. Image
 * labels go through containerd's images service on the same channel; on another runtime its calls
 * fail with ImageLabelsUnsupported.
 */
const connect = (options: CriLiveOptions = {}): Effect.Effect<RuntimeServices, RuntimeUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const constructors = loadServiceConstructors()
    const target = yield* discoverSocket(options, probe(constructors))
    const credentials = grpc.credentials.createInsecure()
    const channel = yield* Effect.acquireRelease(
      Effect.sync(() => new grpc.Channel(target, credentials, channelOptions)),
      (channel) => Effect.sync(() => channel.close())
    )
    const client = (Service: grpc.ServiceClientConstructor) => new Service(target, credentials, { channelOverride: channel })
    const runtimeService = client(constructors.runtimeService)
    const imageService = client(constructors.imageService)

    const callTimeout = options.callTimeout ?? Duration.seconds(30)
    const call = <Res>(
      service: grpc.Client,
      context: CallContext,
      request: object,
      timeout: Duration.Input = callTimeout,
      lease?: string | undefined
    ) => unary<Res>(service, context.method, request, { timeout, lease }).pipe(Effect.mapError((error) => criErrorFrom(error, context)))

    const leasesClient = client(constructors.leases)
    const tracker = makePullTracker(containerdApi(client(constructors.content), leasesClient), {
      ...defaultProgressOptions,
      ...(options.progressInterval === undefined ? {} : { interval: Duration.fromInputUnsafe(options.progressInterval) })
    })
    const leases = yield* makePullLeases(containerdLeases(leasesClient))

    const version: Effect.Effect<RuntimeVersion, CriError> = Effect.map(
      call<VersionResponse>(runtimeService, { method: "Version" }, { version: kubeletApiVersion }),
      (response) => ({
        runtimeName: response.runtime_name,
        runtimeVersion: response.runtime_version,
        runtimeApiVersion: response.runtime_api_version
      })
    ).pipe(Effect.withSpan("CriRuntime.version"))

    /**
     * Under a lease of ours (pullLeases.ts): a failed pull's downloads wait for the next pull of the
     * image, which resumes them; containerd's lease is also how progress finds the pull's content.
     */
    const pullImage = Effect.fn("CriRuntime.pullImage")(function* (request: PullRequest): Effect.fn.Return<string, CriError> {
      // The reference only: credentials stay out of spans as out of logs.
      yield* Effect.annotateCurrentSpan("image", request.image)
      const context: CallContext = { method: "PullImage", image: request.image, secrets: secretsOf(request.auth) }
      const lease = yield* leases.acquire(request.image)
      const pull = Effect.map(
        call<PullImageResponse>(imageService, context, pullImageRequest(request), request.timeout, lease),
        (response) => response.image_ref
      )
      return yield* (request.onProgress === undefined ? pull : tracker.track(request.image, lease, pull, request.onProgress)).pipe(
        Effect.onExit((exit) => (lease === undefined ? Effect.void : leases.release(request.image, lease, Exit.isSuccess(exit))))
      )
    })

    const imageStatus = Effect.fn("CriRuntime.imageStatus")(function* (
      image: string
    ): Effect.fn.Return<Option.Option<ImageInfo>, CriError> {
      yield* Effect.annotateCurrentSpan("image", image)
      return yield* call<ImageStatusResponse>(imageService, { method: "ImageStatus", image }, { image: { image } }).pipe(
        // containerd answers OK without an image; another runtime may say NOT_FOUND.
        Effect.map((response) => Option.map(Option.fromNullishOr(response.image), toImageInfo)),
        Effect.catchTag("ImageNotFound", () => Effect.succeed(Option.none()))
      )
    })

    const listImages: Effect.Effect<ReadonlyArray<ImageInfo>, CriError> = Effect.map(
      call<ListImagesResponse>(imageService, { method: "ListImages" }, {}),
      (response) => response.images.map(toImageInfo)
    ).pipe(Effect.withSpan("CriRuntime.listImages"))

    /** Removing an absent image succeeds, as containerd does it (and kubelet expects). */
    const removeImage = Effect.fn("CriRuntime.removeImage")(function* (image: string): Effect.fn.Return<void, CriError> {
      yield* Effect.annotateCurrentSpan("image", image)
      return yield* call<unknown>(imageService, { method: "RemoveImage", image }, { image: { image } }).pipe(
        Effect.asVoid,
        Effect.catchTag("ImageNotFound", () => Effect.void)
      )
    })

    const imageFsInfo: Effect.Effect<ReadonlyArray<ImageFsUsage>, CriError> = Effect.map(
      call<ImageFsInfoResponse>(imageService, { method: "ImageFsInfo" }, {}),
      (response) => response.image_filesystems.map(toImageFsUsage)
    ).pipe(Effect.withSpan("CriRuntime.imageFsInfo"))

    return {
      runtime: CriRuntime.of({ version, pullImage, imageStatus, listImages, removeImage, imageFsInfo }),
      imageLabels: containerdImageLabels(client(constructors.images)),
      filesystemStats: filesystemStatsAt(options.hostRoot ?? "/")
    }
  })

/** The CRI runtime alone, for callers that need nothing else of the socket. */
export const make = (options: CriLiveOptions = {}): Effect.Effect<CriRuntime["Service"], RuntimeUnavailable, Scope.Scope> =>
  Effect.map(connect(options), (services) => services.runtime)

export const layer = (options: CriLiveOptions = {}): Layer.Layer<CriRuntime | ImageLabels | FilesystemStats, RuntimeUnavailable> =>
  Layer.effectContext(
    Effect.map(connect(options), (services) =>
      Context.make(CriRuntime, services.runtime).pipe(
        Context.add(ImageLabels, services.imageLabels),
        Context.add(FilesystemStats, services.filesystemStats)
      )
    )
  )
