import { Clock, Data, Duration, Effect, Option, Result } from "effect"
import type { Scope } from "effect"
import type { NodeImageStatus } from "../../api/nodeImage.ts"
import { CriRuntime } from "../../cri/CriRuntime.ts"
import type { CriError } from "../../cri/errors.ts"
import { ImageLabels, type ImageLabelsError } from "../../cri/ImageLabels.ts"
import type { KubeApi } from "../../kube/KubeApi.ts"
import { Scheduler } from "../../workqueue/Scheduler.ts"
import { readableSpec, type StoredNodeImage } from "../nodeImageSpec.ts"
import { type OwnerPolicyUnknown, readOwnerPolicies } from "./ownerPolicies.ts"
import {
  decidePins,
  type HeldPin,
  type OwnerPolicy,
  ownersToRead,
  pinDemand,
  pinLabels,
  type PinTag,
  pinTags,
  unpinLabels
} from "./pinDecision.ts"

/** Keeps containerd's pin label on the images that Never jobs want on this node (`--pin-images`). */
export interface ImagePins {
  /** The NodeImage as stored now (undefined: none): pins are checked again if what they depend on changed. */
  readonly changed: (nodeImage: StoredNodeImage | undefined) => Effect.Effect<void>
}

export interface ImagePinsOptions {
  readonly nodeName: string
  /** `--pin-images`. Off, the daemon still removes the pins it set in an earlier run, once at start. */
  readonly enabled: boolean
  /** The NodeImage as stored now. */
  readonly current: () => StoredNodeImage | undefined
  /** Pins are checked again this often: a job deleted or edited while its tag stays put is noticed so. */
  readonly resyncInterval: Duration.Input
}

/** The spec did not decode: the puller reports it; pins stay as they are until it does. */
class SpecUnreadable extends Data.TaggedError("SpecUnreadable")<{ readonly message: string }> {}

type PinError = ImageLabelsError | CriError | OwnerPolicyUnknown | SpecUnreadable

const pinsKey = "pins"
const retryFloorMillis = 1_000
const retryCapMillis = 60_000

/**
 * The effectful side of pinning: reads the NodeImage, the owner jobs' policies, the runtime's
 * images and image records, asks the pure decision (pinDecision.ts) which labels to change, and
 * changes them through ImageLabels. One queue key, so a burst of NodeImage changes is one pass.
 * A runtime without containerd's images service (ImageLabelsUnsupported, or no ImageLabels at all)
 * makes pinning a no-op on this node, said once in the log; other failures leave the pins as they
 * are and are retried with a growing delay.
 */
export const makeImagePins = Effect.fnUntraced(function* (
  options: ImagePinsOptions
): Effect.fn.Return<ImagePins, never, KubeApi | CriRuntime | Scheduler | Scope.Scope> {
  const services = yield* Effect.context<KubeApi | CriRuntime>()
  const labels = yield* Effect.serviceOption(ImageLabels)
  const queue = yield* (yield* Scheduler).queue("image-pins")
  const resyncMillis = Duration.toMillis(Duration.fromInputUnsafe(options.resyncInterval))
  let previous: ReadonlyArray<PinTag> = []
  let held: ReadonlyArray<HeldPin> = []
  let fingerprint: string | undefined
  /**
   * Owner policies as last read, with the spec and time they were read at. A job's policy can
   * only matter anew when the spec changes (owners come and go, a policy edit rewrites the tag's
   * pull policy) or at the resync; a pull finishing needs no new reads.
   */
  let policies = new Map<string, OwnerPolicy>()
  let policiesFor: { readonly spec: string; readonly at: number } | undefined
  let unsupported = Option.isNone(labels)
  let failures = 0

  if (unsupported && options.enabled) {
    yield* Effect.logWarning("--pin-images: this runtime offers no image labels; images are not pinned on this node").pipe(
      Effect.annotateLogs({ node: options.nodeName })
    )
  }

  const tagsOf = (nodeImage: StoredNodeImage | undefined): Result.Result<ReadonlyArray<PinTag>, string> => {
    if (nodeImage === undefined || !options.enabled) return Result.succeed([])
    const spec = nodeImage.view
    if (Result.isFailure(spec)) return Result.fail(spec.failure)
    // A tag the daemon cannot read is never pulled: nothing to pin for it.
    return Result.succeed(pinTags(readableSpec(spec.success), (nodeImage.raw["status"] as NodeImageStatus | undefined)?.imageStatuses))
  }

  /** What pins depend on: the spec, and each tag's reported phase (a finished pull brings the image). */
  const pinInputs = (nodeImage: StoredNodeImage | undefined): string => {
    const statuses = (nodeImage?.raw["status"] as NodeImageStatus | undefined)?.imageStatuses ?? {}
    const phases = Object.entries(statuses).flatMap(([image, status]) => status.tags.map((t) => [image, t.tag, t.version, t.phase]))
    return JSON.stringify([nodeImage?.raw["spec"], phases])
  }

  const reconcile = (imageLabels: ImageLabels["Service"]): Effect.Effect<void, PinError, KubeApi | CriRuntime> =>
    Effect.gen(function* () {
      const nodeImage = options.current()
      const current = tagsOf(nodeImage)
      if (Result.isFailure(current)) return yield* Effect.fail(new SpecUnreadable({ message: current.failure }))
      const now = yield* Clock.currentTimeMillis
      const spec = JSON.stringify(nodeImage?.raw["spec"] ?? null)
      const owners = ownersToRead(previous, current.success, held)
      const fresh = policiesFor !== undefined && policiesFor.spec === spec && now - policiesFor.at < resyncMillis
      const read = yield* readOwnerPolicies(fresh ? owners.filter((o) => o.uid !== undefined && !policies.has(o.uid)) : owners)
      policies = fresh ? new Map([...policies, ...read]) : new Map(read)
      if (!fresh) policiesFor = { spec, at: now }
      const demand = pinDemand({ previous, current: current.success, held, policies, now })
      const images = demand.wanted.length === 0 ? [] : yield* (yield* CriRuntime).listImages
      const changes = decidePins(demand.wanted, images, yield* imageLabels.list)
      for (const name of changes.pin) yield* imageLabels.setLabels(name, pinLabels)
      for (const name of changes.unpin) yield* imageLabels.setLabels(name, unpinLabels)
      if (changes.pin.length > 0 || changes.unpin.length > 0) {
        yield* Effect.logInfo("image pins changed").pipe(
          Effect.annotateLogs({ node: options.nodeName, pinned: changes.pin.join(" "), unpinned: changes.unpin.join(" ") })
        )
      }
      previous = current.success
      held = demand.held
    })

  const worker = Effect.gen(function* () {
    const key = yield* queue.take
    const result = yield* Effect.result(Option.isSome(labels) && !unsupported ? reconcile(labels.value) : Effect.void).pipe(
      Effect.provideContext(services)
    )
    yield* queue.done(key)
    if (Result.isSuccess(result)) {
      failures = 0
      if (options.enabled && !unsupported) yield* queue.add(key, resyncMillis)
      return
    }
    const failure = result.failure
    if (failure._tag === "ImageLabelsUnsupported") {
      unsupported = true
      const log = options.enabled ? Effect.logWarning : Effect.logDebug
      return yield* log("--pin-images: the runtime has no containerd images service; images are not pinned on this node").pipe(
        Effect.annotateLogs({ node: options.nodeName, detail: failure.message })
      )
    }
    const delay = Math.min(retryCapMillis, retryFloorMillis * 2 ** failures++)
    yield* Effect.logWarning("could not bring image pins up to date; pins stay as they are and are checked again").pipe(
      Effect.annotateLogs({ node: options.nodeName, failure: `${failure._tag}: ${failure.message}`, retryIn: `${delay / 1000}s` })
    )
    yield* queue.add(key, delay)
  })
  yield* Effect.forkScoped(Effect.forever(worker))

  return {
    changed: (nodeImage) =>
      Effect.suspend(() => {
        if (unsupported) return Effect.void
        // Off, only the first look matters: the pins of an earlier run with --pin-images go.
        const seen = options.enabled ? pinInputs(nodeImage) : "off"
        if (seen === fingerprint) return Effect.void
        fingerprint = seen
        return queue.add(pinsKey)
      })
  }
})
