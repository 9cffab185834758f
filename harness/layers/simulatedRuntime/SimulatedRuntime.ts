/**
 * A simulated container runtime: a node's image store plus a registry, with pulls that take time
 * on Effect's Clock (so `TestClock.adjust` finishes them), failures scripted per image, and a
 * record of every call. It is what `preheat simulated-daemon`, `preheat dev` and
 * `preheat fleet` pull on (see simulatedNode.ts), and the runtime the daemon's tests script.
 *
 * Images are matched as the daemon must match them (`sameImage`: docker.io and library/
 * normalised, digests only against digests), and stored as containerd reports them: fully
 * qualified repoTags (`docker.io/library/nginx:1.25`) and repoDigests (`...@sha256:...`).
 * The records keep whether a pull carried credentials, never the credentials.
 *
 * Image labels (ImageLabels) as containerd keeps them: one record per name of an image (its id,
 * each repoTag and repoDigest), labels per record name, kept when a tag moves to another image
 * (as CRI's re-tagging update leaves foreign labels alone) and gone with the image.
 *
 * The node's images fill its disk (`disk`): ImageFsInfo reports their bytes on the image
 * filesystem's mountpoint, FilesystemStats that filesystem's size and free room (less what else
 * is on it), and a pull whose image no longer fits fails as containerd's does, with "no space left
 * on device".
 *
 * Progress, when the request asks for it: 0 of unknown at the start, 0 of the image's size once
 * the "manifest" is in, then `progressSteps` even steps through the latency, and 100 on success
 * only. A failing pull stops reporting where it failed. From the "manifest" to the end the pull
 * says it awaits bytes (`awaitingBytes`); a stalled pull (`stall`, `stalls`) stops getting them
 * part way and waits, as on a registry that holds the connection open and sends nothing.
 *
 * With a peer mirror (`peerMirror`, `preheat dev --p2p`), an image is made of layers (peerMirror.ts
 * simulatedLayers) and a pull takes each one from the node itself, from a peer that holds it whole,
 * or from the registry, at that link's speed, reporting the bytes once a second; the node then
 * offers the layers it completed, until its image is removed or the node goes.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Duration, Effect, Layer, Option, Result } from "effect"
import { formatImageReference, type ImageReference, parseImageReference, sameImage } from "../../../src/api/imageReference.ts"
import { CriRuntime } from "../../../src/cri/CriRuntime.ts"
import type { ImageFsUsage, ImageInfo, PullProgress, PullRequest, RegistryAuth, RuntimeVersion } from "../../../src/cri/CriRuntime.ts"
import {
  ImageLabels,
  type ImageLabelsError,
  ImageLabelsFailed,
  ImageLabelsUnsupported,
  type ImageRecord
} from "../../../src/cri/ImageLabels.ts"
import {
  type CriError,
  DeadlineExceeded,
  ImageNotFound,
  InvalidReference,
  RegistryThrottled,
  RuntimeFailure,
  RuntimeUnavailable,
  Unauthorized
} from "../../../src/cri/errors.ts"
import { FilesystemStats, FilesystemStatsFailed } from "../../../src/cri/FilesystemStats.ts"
import {
  defaultSimulatedDisk,
  type FailureKind,
  type FailureRule,
  type RegistryImage,
  type SimulatedDisk,
  type SimulatedImage,
  type SimulatedRuntimeConfig,
  simulatedImageFsMountpoint,
  type StallRule
} from "./config.ts"
import { defaultRecordLimits, RecordLog } from "./records.ts"
import { simulatedLayers } from "./peerMirror.ts"
import type { CallRecord, PullOutcome, PullRecord } from "./records.ts"

/** The runtime with what scripts it and looks inside it (tests, fault injection). */
export interface SimulatedRuntimeHandle {
  readonly runtime: CriRuntime["Service"]
  readonly imageLabels: ImageLabels["Service"]
  /** The size of the node's disk: statfs of the image filesystem's mountpoint. */
  readonly filesystemStats: FilesystemStats["Service"]
  /** The labels of one image record (empty when it has none or does not exist), without recording a call. */
  readonly labelsOf: (name: string) => Effect.Effect<Readonly<Record<string, string>>>
  /** Every pull, in start order, with its current outcome (the newest within `recordLimits`). */
  readonly pulls: Effect.Effect<ReadonlyArray<PullRecord>>
  /** Every call to the runtime, pulls included (the newest within `recordLimits`). */
  readonly calls: Effect.Effect<ReadonlyArray<CallRecord>>
  /** The node's images, without recording a call and regardless of `setAvailable`. */
  readonly images: Effect.Effect<ReadonlyArray<ImageInfo>>
  readonly hasImage: (image: string) => Effect.Effect<boolean>
  /** Puts an image on the node, as if pulled earlier. */
  readonly addImage: (image: SimulatedImage) => Effect.Effect<void>
  /** Publishes an image in the registry: a tag pushed again moves to the new id. */
  readonly push: (image: RegistryImage) => Effect.Effect<void>
  /** Scripts failures for pulls of this image (tag or digest, `sameImage`); rules queue up. */
  readonly fail: (image: string, rule: FailureRule) => Effect.Effect<void>
  readonly clearFailures: (image?: string) => Effect.Effect<void>
  readonly setLatency: (image: string, latency: Duration.Input) => Effect.Effect<void>
  /** Pulls of this image never finish: they end in DeadlineExceeded at the request's timeout. */
  readonly hang: (image: string) => Effect.Effect<void>
  /**
   * Pulls of this image stop getting bytes at `atPercent` (default 50) of their transfer, `times`
   * pulls (default 1): the progress stops there, still awaiting bytes, until the request's
   * deadline (DeadlineExceeded) or until cancelled. Rules queue up.
   */
  readonly stall: (image: string, rule?: StallRule) => Effect.Effect<void>
  /**
   * The registry refuses pulls of this repository (any tag or digest) with Unauthorized unless
   * `accept` approves the request's credentials.
   */
  readonly requireAuth: (repository: string, accept: (auth: RegistryAuth | undefined) => boolean) => Effect.Effect<void>
  /** Changes the node's disk (a bigger one, or other data taking room), keeping the images on it. */
  readonly setDisk: (disk: SimulatedDisk) => Effect.Effect<void>
  /** While unavailable every call fails with RuntimeUnavailable, as with a restarting runtime. */
  readonly setAvailable: (available: boolean) => Effect.Effect<void>
}

// --- model -----------------------------------------------------------------------------

interface Served {
  readonly id: string
  readonly digest: string
  readonly size: number
}

interface NodeImage {
  readonly id: string
  readonly size: number
  readonly repoTags: Set<string>
  readonly repoDigests: Set<string>
}

interface ScriptedFailure {
  readonly image: ImageReference
  readonly rule: FailureRule
  remaining: number
}

interface ScriptedStall {
  readonly image: ImageReference
  readonly atPercent: number
  remaining: number
}

/** Where a stall stops the transfer unless told otherwise. */
const defaultStallPercent = 50

const defaultVersion: RuntimeVersion = {
  runtimeName: "simulated",
  runtimeVersion: "0.0.0",
  runtimeApiVersion: "v1"
}

const mebibyte = 1024 * 1024

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text).digest("hex")}`

/** Set-up mistakes (an image reference that does not parse) are bugs of the caller: fail loudly. */
const parseOrThrow = (reference: string): ImageReference => {
  const parsed = parseImageReference(reference)
  if (Result.isFailure(parsed)) throw parsed.failure
  return parsed.success
}

const repository = (ref: ImageReference): string => `${ref.domain}/${ref.path}`

/** `name:tag`, or `name@digest` for digest references; a bare name means `:latest`. */
const servedKey = (ref: ImageReference): string =>
  ref.digest !== undefined ? `${repository(ref)}@${ref.digest}` : `${repository(ref)}:${ref.tag ?? "latest"}`

const repoTag = (ref: ImageReference): string => `${repository(ref)}:${ref.tag ?? "latest"}`

const isImageId = (image: string): boolean => /^(sha256:)?[a-f0-9]{64}$/.test(image)

const toInfo = (image: NodeImage): ImageInfo => ({
  id: image.id,
  repoTags: [...image.repoTags],
  repoDigests: [...image.repoDigests],
  size: image.size
})

/** The simulated registry's 429, worded as containerd reports Docker Hub's. */
const simulatedRateLimit =
  "simulated registry: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit"

const criError = (kind: FailureKind, image: string, message: string | undefined): CriError => {
  const text = message ?? `simulated ${kind} for ${image}`
  switch (kind) {
    case "RuntimeUnavailable":
      return new RuntimeUnavailable({ message: text })
    case "DeadlineExceeded":
      return new DeadlineExceeded({ image })
    case "ImageNotFound":
      return new ImageNotFound({ image, message: text })
    case "Unauthorized":
      return new Unauthorized({ image, message: text })
    case "RegistryThrottled":
      return new RegistryThrottled({ image, message: text })
    case "InvalidReference":
      return new InvalidReference({ image, message: text })
    case "RuntimeFailure":
      return new RuntimeFailure({ message: text })
  }
}

// --- the runtime -----------------------------------------------------------------------

export const makeSimulatedRuntime = (config: SimulatedRuntimeConfig = {}): Effect.Effect<SimulatedRuntimeHandle> =>
  Effect.sync(() => {
    const peers = config.peerMirror
    const layersOf = (image: { readonly id: string; readonly size: number }) => simulatedLayers(image.id, image.size, sha256)
    const defaultSize = config.defaultSize ?? 10 * mebibyte
    const served = new Map<string, Served>()
    const node = new Map<string, NodeImage>()
    const failures: Array<ScriptedFailure> = []
    const stalls: Array<ScriptedStall> = []
    const latencies: Array<{ readonly image: ImageReference; readonly latency: Duration.Duration }> = []
    const authRules: Array<{ readonly repository: string; readonly accept: (auth: RegistryAuth | undefined) => boolean }> = []
    const pulls = new RecordLog<PullRecord>(config.recordLimits ?? defaultRecordLimits)
    const calls = new RecordLog<CallRecord>(config.recordLimits ?? defaultRecordLimits)
    /** By record name, as containerd keys image records. */
    const labels = new Map<string, Map<string, string>>()
    let available = true
    let disk = config.disk ?? defaultSimulatedDisk

    const serve = (image: RegistryImage): void => {
      const ref = parseOrThrow(image.reference)
      const digest = ref.digest ?? image.digest ?? sha256(`manifest:${image.id}`)
      const entry: Served = { id: image.id, digest, size: image.size ?? defaultSize }
      served.set(servedKey(ref), entry)
      served.set(`${repository(ref)}@${digest}`, entry)
    }

    /** A tag belongs to one image on a node: storing it elsewhere takes it from the old one. */
    const store = (id: string, size: number, ref: ImageReference, digest: string | undefined): void => {
      const image = node.get(id) ?? { id, size, repoTags: new Set<string>(), repoDigests: new Set<string>() }
      node.set(id, image)
      if (digest !== undefined) image.repoDigests.add(`${repository(ref)}@${digest}`)
      if (ref.digest === undefined) {
        const tag = repoTag(ref)
        for (const other of node.values()) if (other !== image) other.repoTags.delete(tag)
        image.repoTags.add(tag)
      }
    }

    const addImage = (image: SimulatedImage): void => {
      const refs = image.references.map(parseOrThrow)
      const size = image.size ?? defaultSize
      for (const ref of refs) store(image.id, size, ref, ref.digest)
      // The registry serves what the node has, unless told otherwise.
      for (const ref of refs) {
        if (ref.digest !== undefined || served.has(servedKey(ref))) continue
        const digest = refs.find((r) => r.digest !== undefined && repository(r) === repository(ref))?.digest
        serve({ reference: repoTag(ref), id: image.id, size, ...(digest === undefined ? {} : { digest }) })
      }
    }

    for (const image of config.registry ?? []) serve(image)
    for (const image of config.images ?? []) addImage(image)
    if (peers !== undefined)
      for (const image of node.values())
        peers.mirror.hold(
          peers.node,
          layersOf(image).map((l) => l.digest)
        )

    const find = (image: string): NodeImage | undefined => {
      if (isImageId(image)) return node.get(image.startsWith("sha256:") ? image : `sha256:${image}`)
      const parsed = parseImageReference(image)
      if (Result.isFailure(parsed)) return undefined
      const ref = parsed.success
      for (const candidate of node.values()) {
        for (const name of [...candidate.repoTags, ...candidate.repoDigests]) {
          const other = parseImageReference(name)
          if (Result.isSuccess(other) && sameImage(ref, other.success)) return candidate
        }
      }
      return undefined
    }

    const recordNames = (image: NodeImage): ReadonlyArray<string> => [image.id, ...image.repoTags, ...image.repoDigests]

    const records = (): ReadonlyArray<ImageRecord> =>
      [...node.values()].flatMap((image) =>
        recordNames(image).map((name) => ({ name, labels: Object.fromEntries(labels.get(name) ?? []) }))
      )

    const imageBytes = (): number => {
      let bytes = 0
      for (const image of node.values()) bytes += image.size
      return bytes
    }
    const freeBytes = (): number => Math.max(0, disk.capacity - (disk.otherUsed ?? 0) - imageBytes())

    const now = Clock.currentTimeMillis

    const record = (method: CallRecord["method"], image?: string) =>
      Effect.flatMap(now, (at) =>
        Effect.sync(() => {
          calls.add({ method, at, ...(image === undefined ? {} : { image }) })
        })
      )

    const ensureAvailable = Effect.suspend(() =>
      available ? Effect.void : Effect.fail(new RuntimeUnavailable({ message: "simulated runtime is unavailable" }))
    )

    /** The tag revision each made-up tag was made up at (tagRevision): another one makes it up again. */
    const madeUpAt = new Map<string, string | undefined>()

    /** Resolves what the registry serves for a reference, making it up when allowed. */
    const resolve = (ref: ImageReference): Served | undefined => {
      const key = servedKey(ref)
      const known = served.get(key)
      const revision = ref.digest === undefined ? config.tagRevision?.(ref) : undefined
      const moved = madeUpAt.has(key) && madeUpAt.get(key) !== revision
      if ((known !== undefined && !moved) || (known === undefined && config.unknownImages === "notFound")) return known
      madeUpAt.set(key, revision)
      const id = sha256(`image:${key}${revision === undefined ? "" : `#${revision}`}`)
      const size = config.synthesizedSize?.(ref)
      serve({
        reference: formatImageReference(ref),
        id,
        digest: ref.digest ?? sha256(`manifest:${id}`),
        ...(size === undefined ? {} : { size })
      })
      return served.get(key)
    }

    const latencyOf = (image: string, ref: ImageReference, size: number): Duration.Duration => {
      const override = latencies.findLast((l) => sameImage(l.image, ref))
      if (override !== undefined) return override.latency
      const latency = config.latency ?? Duration.seconds(1)
      return Duration.fromInputUnsafe(typeof latency === "function" ? latency({ image, reference: ref, size }) : latency)
    }

    /** Takes one use of the first rule for this image. */
    /** Pulls of each reference the registry throttled so far (`throttles`). */
    const throttled = new Map<string, number>()
    const takeFailure = (ref: ImageReference): FailureRule | undefined => {
      const scripted = failures.find((f) => f.remaining > 0 && sameImage(f.image, ref))
      if (scripted === undefined) {
        const key = formatImageReference(ref)
        const done = throttled.get(key) ?? 0
        if (done >= (config.throttles?.(ref) ?? 0)) return undefined
        throttled.set(key, done + 1)
        return { kind: "RegistryThrottled", message: simulatedRateLimit }
      }
      scripted.remaining -= 1
      return scripted.rule
    }

    /** Pulls of each reference stalled so far by `config.stalls`. */
    const stalledPulls = new Map<string, number>()
    /** Where this pull stalls (a percentage of its transfer), if it does: a scripted stall first, then `config.stalls`. */
    const takeStall = (ref: ImageReference): number | undefined => {
      const scripted = stalls.find((s) => s.remaining > 0 && sameImage(s.image, ref))
      if (scripted !== undefined) {
        scripted.remaining -= 1
        return scripted.atPercent
      }
      const key = formatImageReference(ref)
      const done = stalledPulls.get(key) ?? 0
      if (done >= (config.stalls?.(ref) ?? 0)) return undefined
      stalledPulls.set(key, done + 1)
      return defaultStallPercent
    }

    /** Waits `delay` then runs `then`, unless the request's deadline comes first. */
    const within = <A>(
      image: string,
      timeout: Duration.Duration,
      delay: Duration.Duration,
      then: Effect.Effect<A, CriError>
    ): Effect.Effect<A, CriError> => {
      if (Duration.isLessThanOrEqualTo(delay, timeout)) {
        return Duration.isFinite(delay) ? Effect.andThen(Effect.sleep(delay), then) : Effect.never
      }
      return Duration.isFinite(timeout) ? Effect.andThen(Effect.sleep(timeout), Effect.fail(new DeadlineExceeded({ image }))) : Effect.never
    }

    /**
     * The download: progress steps while the latency runs, cut short by the request's deadline,
     * then the image is stored and 100 reported.
     */
    const transfer = (
      request: PullRequest,
      ref: ImageReference,
      target: Served,
      stallAt: number | undefined
    ): Effect.Effect<string, CriError> => {
      const report = (progress: PullProgress) => request.onProgress?.(progress) ?? Effect.void
      const { image, timeout } = request
      const latency = latencyOf(image, ref, target.size)
      const steps = typeof config.progressSteps === "function" ? config.progressSteps(latency) : (config.progressSteps ?? 10)
      const bytesTotal = steps > 0 ? target.size : 0
      const done = Effect.suspend(() => {
        if (!node.has(target.id) && target.size > freeBytes()) {
          return Effect.fail(
            new RuntimeFailure({
              message: `failed to pull and unpack image "${image}": failed to extract layer: write ${simulatedImageFsMountpoint}: no space left on device`
            })
          )
        }
        store(target.id, target.size, ref, target.digest)
        return Effect.as(report({ bytesDone: bytesTotal, bytesTotal, percent: 100, awaitingBytes: false }), target.id)
      })
      return Effect.gen(function* () {
        yield* report({ bytesDone: 0, bytesTotal: 0, percent: 0 })
        const rest = stallAt === undefined ? latency : Duration.infinity
        if (steps === 0 || !Duration.isFinite(latency)) return yield* within(image, timeout, rest, done)
        yield* report({ bytesDone: 0, bytesTotal, percent: 0, awaitingBytes: true })
        const total = Duration.toMillis(latency)
        const deadline = Duration.toMillis(timeout)
        let elapsed = 0
        for (let k = 1; k < steps; k++) {
          const at = Math.floor((total * k) / steps)
          if (at > deadline || (stallAt !== undefined && 100 * k > stallAt * steps)) break
          yield* Effect.sleep(Duration.millis(at - elapsed))
          elapsed = at
          yield* report({
            bytesDone: Math.floor((bytesTotal * k) / steps),
            bytesTotal,
            percent: Math.floor((100 * k) / steps),
            awaitingBytes: true
          })
        }
        const timeLeft = Duration.isFinite(timeout) ? Duration.millis(deadline - elapsed) : timeout
        return yield* within(image, timeLeft, stallAt === undefined ? Duration.millis(total - elapsed) : rest, done)
      })
    }

    /**
     * The download through the peer mirror: the manifest, then each layer from wherever the mirror
     * says, one second's worth at a time (so progress and the registry's count move as bytes
     * arrive, and a deadline cuts a layer short where it is), each completed layer offered to the
     * other nodes at once.
     */
    const transferThroughPeers = (
      request: PullRequest,
      ref: ImageReference,
      target: Served,
      { mirror, node: self, overhead }: NonNullable<SimulatedRuntimeConfig["peerMirror"]>
    ): Effect.Effect<string, CriError> => {
      const report = (progress: PullProgress) => request.onProgress?.(progress) ?? Effect.void
      const { image, timeout } = request
      const key = servedKey(ref)
      const deadline = Duration.toMillis(timeout)
      const size = target.size
      return Effect.gen(function* () {
        const startedAt = yield* now
        let elapsed = 0
        const wait = (ms: number) => {
          if (elapsed + ms > deadline)
            return Effect.andThen(Effect.sleep(Duration.millis(deadline - elapsed)), Effect.fail(new DeadlineExceeded({ image })))
          elapsed += ms
          return Effect.sleep(Duration.millis(ms))
        }
        yield* report({ bytesDone: 0, bytesTotal: 0, percent: 0 })
        yield* wait(Duration.toMillis(overhead))
        yield* report({ bytesDone: 0, bytesTotal: size, percent: 0 })
        let bytesDone = 0
        let fetching = false
        const held: Array<string> = []
        const fetch = Effect.gen(function* () {
          for (const layer of layersOf(target)) {
            const source = mirror.sourceOf(self, layer.digest)
            if (source === "local") {
              bytesDone += layer.size
              continue
            }
            if (!fetching) {
              fetching = true
              mirror.pullStarted(key, startedAt)
            }
            const bytesPerSecond = mirror.bytesPerSecond(source)
            for (let left = layer.size; left > 0; ) {
              const chunk = Math.min(left, bytesPerSecond)
              yield* wait(Math.ceil((chunk * 1000) / bytesPerSecond))
              mirror.count(key, source, chunk)
              left -= chunk
              bytesDone += chunk
              if (left > 0) yield* report({ bytesDone, bytesTotal: size, percent: Math.min(99, Math.floor((100 * bytesDone) / size)) })
            }
            mirror.hold(self, [layer.digest])
            held.push(layer.digest)
            yield* report({ bytesDone, bytesTotal: size, percent: Math.min(99, Math.floor((100 * bytesDone) / size)) })
          }
          if (!node.has(target.id) && size > freeBytes()) {
            return yield* Effect.fail(
              new RuntimeFailure({
                message: `failed to pull and unpack image "${image}": failed to extract layer: write ${simulatedImageFsMountpoint}: no space left on device`
              })
            )
          }
          store(target.id, size, ref, target.digest)
          yield* report({ bytesDone: size, bytesTotal: size, percent: 100 })
          return target.id
        })
        return yield* fetch.pipe(
          // Layers of an image that never made it onto the node are not offered.
          Effect.onError(() => Effect.sync(() => (node.has(target.id) ? undefined : mirror.drop(self, held)))),
          Effect.ensuring(
            Effect.suspend(() => (fetching ? Effect.flatMap(now, (at) => Effect.sync(() => mirror.pullEnded(key, at))) : Effect.void))
          )
        )
      })
    }

    const attempt = (request: PullRequest): Effect.Effect<string, CriError> =>
      Effect.suspend(() => {
        const { image, timeout } = request
        if (!available) return Effect.fail(new RuntimeUnavailable({ message: "simulated runtime is unavailable" }))
        const parsed = parseImageReference(image)
        if (Result.isFailure(parsed)) {
          return Effect.fail(new InvalidReference({ image, message: parsed.failure.message }))
        }
        const ref = parsed.success

        const failure = takeFailure(ref)
        if (failure !== undefined) {
          const after =
            failure.after !== undefined
              ? Duration.fromInputUnsafe(failure.after)
              : failure.kind === "DeadlineExceeded"
                ? timeout
                : Duration.zero
          return within(image, timeout, after, Effect.fail(criError(failure.kind, image, failure.message)))
        }

        const rule = authRules.findLast((r) => r.repository === repository(ref))
        const anonymous = [request.auth?.username, request.auth?.identityToken, request.auth?.registryToken].every((v) => (v ?? "") === "")
        if ((rule !== undefined && !rule.accept(request.auth)) || (anonymous && config.refusesAnonymous?.(ref) === true)) {
          return Effect.fail(new Unauthorized({ image, message: "simulated registry: 401 Unauthorized" }))
        }

        const target = resolve(ref)
        if (target === undefined) {
          return Effect.fail(new ImageNotFound({ image, message: "simulated registry: manifest unknown" }))
        }

        return peers === undefined ? transfer(request, ref, target, takeStall(ref)) : transferThroughPeers(request, ref, target, peers)
      })

    const pullImage = (request: PullRequest): Effect.Effect<string, CriError> =>
      Effect.gen(function* () {
        const startedAt = yield* now
        calls.add({ method: "pullImage", image: request.image, at: startedAt })
        const index = pulls.add({
          image: request.image,
          authenticated: request.auth !== undefined,
          sandboxConfig: request.sandboxConfig,
          timeout: request.timeout,
          startedAt,
          endedAt: undefined,
          outcome: { _tag: "InFlight" }
        })
        const finish = (outcome: PullOutcome) =>
          Effect.flatMap(now, (endedAt) => Effect.sync(() => pulls.update(index, (current) => ({ ...current, endedAt, outcome }))))
        return yield* attempt(request).pipe(
          Effect.tap((imageId) => finish({ _tag: "Succeeded", imageId })),
          Effect.tapError((error) => finish({ _tag: "Failed", error })),
          // An interrupted pull never reaches `store`, so the image stays absent.
          Effect.onInterrupt(() => finish({ _tag: "Cancelled" }))
        )
      })

    const runtime = CriRuntime.of({
      version: record("version").pipe(Effect.andThen(ensureAvailable), Effect.as(config.version ?? defaultVersion)),
      pullImage,
      imageStatus: (image) =>
        record("imageStatus", image).pipe(
          Effect.andThen(ensureAvailable),
          Effect.andThen(Effect.sync(() => Option.map(Option.fromNullishOr(find(image)), toInfo)))
        ),
      listImages: record("listImages").pipe(
        Effect.andThen(ensureAvailable),
        Effect.andThen(Effect.sync(() => [...node.values()].map(toInfo)))
      ),
      // CRI's RemoveImage removes the whole image and succeeds when there is nothing to remove.
      removeImage: (image) =>
        record("removeImage", image).pipe(
          Effect.andThen(ensureAvailable),
          Effect.andThen(
            Effect.sync(() => {
              const found = find(image)
              if (found === undefined) return
              node.delete(found.id)
              peers?.mirror.drop(
                peers.node,
                layersOf(found).map((l) => l.digest)
              )
              for (const name of recordNames(found)) labels.delete(name)
            })
          )
        ),
      imageFsInfo: record("imageFsInfo").pipe(
        Effect.andThen(ensureAvailable),
        Effect.andThen(
          Effect.sync(
            (): ReadonlyArray<ImageFsUsage> => [{ mountpoint: simulatedImageFsMountpoint, usedBytes: imageBytes(), inodesUsed: node.size }]
          )
        )
      )
    })

    const filesystemStats = FilesystemStats.of({
      statfs: (path) =>
        Effect.suspend(() =>
          path === simulatedImageFsMountpoint
            ? Effect.succeed({ totalBytes: disk.capacity, freeBytes: freeBytes() })
            : Effect.fail(new FilesystemStatsFailed({ path, message: `ENOENT: no such file or directory, statfs '${path}'` }))
        )
    })

    const labelsAvailable = Effect.suspend((): Effect.Effect<void, ImageLabelsError> => {
      if (config.imageLabels === "unsupported") {
        return Effect.fail(new ImageLabelsUnsupported({ message: "the simulated runtime has no containerd images service" }))
      }
      return available ? Effect.void : Effect.fail(new ImageLabelsFailed({ message: "simulated runtime is unavailable" }))
    })

    const imageLabels = ImageLabels.of({
      list: record("listImageRecords").pipe(Effect.andThen(labelsAvailable), Effect.andThen(Effect.sync(records))),
      setLabels: (name, changes) =>
        record("setImageLabels", name).pipe(
          Effect.andThen(labelsAvailable),
          Effect.andThen(
            Effect.sync(() => {
              if (!records().some((r) => r.name === name)) return
              const current = labels.get(name) ?? new Map<string, string>()
              for (const [key, value] of Object.entries(changes)) {
                if (value === undefined) current.delete(key)
                else current.set(key, value)
              }
              labels.set(name, current)
            })
          )
        )
    })

    return {
      runtime,
      imageLabels,
      filesystemStats,
      labelsOf: (name) => Effect.sync(() => Object.fromEntries(labels.get(name) ?? [])),
      pulls: Effect.sync(() => pulls.all()),
      calls: Effect.sync(() => calls.all()),
      images: Effect.sync(() => [...node.values()].map(toInfo)),
      hasImage: (image) => Effect.sync(() => find(image) !== undefined),
      addImage: (image) => Effect.sync(() => addImage(image)),
      push: (image) => Effect.sync(() => serve(image)),
      fail: (image, rule) =>
        Effect.sync(() => {
          const times = rule.times ?? 1
          failures.push({ image: parseOrThrow(image), rule, remaining: times === "always" ? Infinity : times })
        }),
      clearFailures: (image) =>
        Effect.sync(() => {
          const ref = image === undefined ? undefined : parseOrThrow(image)
          for (let i = failures.length - 1; i >= 0; i--) {
            const f = failures[i]
            if (f !== undefined && (ref === undefined || sameImage(f.image, ref))) failures.splice(i, 1)
          }
        }),
      setLatency: (image, latency) =>
        Effect.sync(() => {
          latencies.push({ image: parseOrThrow(image), latency: Duration.fromInputUnsafe(latency) })
        }),
      hang: (image) =>
        Effect.sync(() => {
          latencies.push({ image: parseOrThrow(image), latency: Duration.infinity })
        }),
      stall: (image, rule = {}) =>
        Effect.sync(() => {
          const times = rule.times ?? 1
          stalls.push({
            image: parseOrThrow(image),
            atPercent: rule.atPercent ?? defaultStallPercent,
            remaining: times === "always" ? Infinity : times
          })
        }),
      requireAuth: (repo, accept) =>
        Effect.sync(() => {
          authRules.push({ repository: repository(parseOrThrow(repo)), accept })
        }),
      setDisk: (value) =>
        Effect.sync(() => {
          disk = value
        }),
      setAvailable: (value) =>
        Effect.sync(() => {
          available = value
        })
    } satisfies SimulatedRuntimeHandle
  })

/**
 * The simulated runtime of one node. Its layer provides the CriRuntime and ImageLabels the daemon
 * uses, and the handle to script it; each build is a node of its own (its images, its pulls).
 */
export class SimulatedRuntime extends Context.Service<SimulatedRuntime, SimulatedRuntimeHandle>()("preheat/cri/SimulatedRuntime") {
  static readonly layer = (
    config: SimulatedRuntimeConfig = {}
  ): Layer.Layer<CriRuntime | ImageLabels | FilesystemStats | SimulatedRuntime> =>
    Layer.effectContext(
      Effect.map(
        Effect.tap(makeSimulatedRuntime(config), () => {
          const peers = config.peerMirror
          // A node gone serves its layers no more.
          return peers === undefined ? Effect.void : Effect.addFinalizer(() => Effect.sync(() => peers.mirror.leave(peers.node)))
        }),
        (handle) =>
          Context.make(SimulatedRuntime, handle).pipe(
            Context.add(CriRuntime, handle.runtime),
            Context.add(ImageLabels, handle.imageLabels),
            Context.add(FilesystemStats, handle.filesystemStats)
          )
      )
    )
}
