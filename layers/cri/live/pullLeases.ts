import { randomBytes } from "node:crypto"
import * as grpc from "@grpc/grpc-js"
import { Clock, Duration, Effect } from "effect"
import type { Scope } from "effect"
import { type GrpcCallFailed, isGrpcCode } from "./grpcCalls.ts"
import type { LeaseMessage } from "./grpcPackages.ts"

/**
 * The leases CRI pulls are made under, so that a failed pull's downloads wait for its retry
 * (issue 39, part 4).
 *
 * containerd keeps what a pull fetches, whole blobs and partly written ones (ingests), under a
 * lease. CRI's pull takes a lease of its own and deletes it as it ends, failed or not, so the
 * garbage collector takes a failed pull's downloads and the next attempt fetches every blob from
 * its first byte (seen on containerd 1.6). A pull sent with a lease of ours (the `containerd-lease`
 * header, which CRI's pull and containerd's transfer service use instead of making their own)
 * leaves them to us: the lease of a failed or cancelled pull is kept for the next pull of the same
 * reference, which continues each blob where it stopped (an HTTP Range request), and the lease of a
 * pull that succeeded is deleted, its image holding the content now.
 *
 * A kept lease not taken again within `keepFor` is deleted. Kept leases outlive the daemon: the
 * ones a stopped or restarted daemon left (labelled with their image) are kept by the next as if
 * their pulls had just failed, so a pull cut by a restart resumes too, and what nobody pulls again
 * goes `keepFor` later; without a next daemon containerd collects them at their expiry
 * (`containerd.io/gc.expire`, 24 hours on, as CRI's own). A kept lease is checked before it is
 * used again, and one gone meanwhile (deleted by hand, or by another daemon on the same containerd)
 * is replaced by a new one: a pull never names a lease containerd no longer has. A runtime without
 * containerd's lease service (CRI-O, cri-dockerd) gets no lease: its pulls go as before.
 */

/** containerd's lease service, as the pulls' leases need it (namespace `k8s.io`). */
export interface LeaseApi {
  readonly create: (id: string, labels: Readonly<Record<string, string>>) => Effect.Effect<void, GrpcCallFailed>
  readonly remove: (id: string) => Effect.Effect<void, GrpcCallFailed>
  readonly list: Effect.Effect<ReadonlyArray<LeaseMessage>, GrpcCallFailed>
  /** Whether containerd still has the lease. */
  readonly exists: (id: string) => Effect.Effect<boolean, GrpcCallFailed>
}

export interface PullLeases {
  /** The lease for a pull of `image`: the one its last failed pull left, else a new one; undefined without a lease service. */
  readonly acquire: (image: string) => Effect.Effect<string | undefined>
  /**
   * The pull under `lease` ended: its lease is deleted when it `pulled` the image (in the
   * background: the pull's outcome does not wait for it), kept for the next pull otherwise.
   */
  readonly release: (image: string, lease: string, pulled: boolean) => Effect.Effect<void>
}

export interface PullLeaseOptions {
  /** How long a failed pull's lease waits for the next pull of its image. */
  readonly keepFor: Duration.Duration
  /** How often kept leases are looked at. */
  readonly sweepEvery: Duration.Duration
}

const defaultPullLeaseOptions: PullLeaseOptions = { keepFor: Duration.hours(1), sweepEvery: Duration.minutes(5) }

/** containerd's own pull leases expire after a day; a pull takes less, or containerd's would expire under it too. */
const leaseExpiry = Duration.hours(24)

/** Lets `ctr -n k8s.io leases ls` tell preheat's leases, and the image each is for. */
export const pullLeaseLabel = "apps.kruise.io/preheat-pull"

/** The labels of a new pull lease: containerd's expiry (RFC 3339, whole seconds) and the image. */
export const pullLeaseLabels = (image: string, now: number): Record<string, string> => ({
  "containerd.io/gc.expire": new Date(now + Duration.toMillis(leaseExpiry)).toISOString().replace(/\.\d+Z$/, "Z"),
  [pullLeaseLabel]: image
})

interface Kept {
  readonly lease: string
  readonly keptAt: number
}

/** The images whose kept lease has waited `keepFor` or longer at `now`. */
const staleKept = (kept: ReadonlyMap<string, Kept>, now: number, keepFor: Duration.Duration): ReadonlyArray<string> =>
  [...kept].filter(([, entry]) => now - entry.keptAt >= Duration.toMillis(keepFor)).map(([image]) => image)

export const makePullLeases = (
  containerdLeases: LeaseApi,
  options: PullLeaseOptions = defaultPullLeaseOptions
): Effect.Effect<PullLeases, never, Scope.Scope> =>
  Effect.gen(function* () {
    const kept = new Map<string, Kept>()
    let supported = true
    const scope = yield* Effect.scope

    /** Deleting is tidying: a lease left behind expires on its own. */
    const remove = (lease: string) =>
      containerdLeases
        .remove(lease)
        .pipe(
          Effect.catch((error) =>
            Effect.logDebug("could not delete a pull lease").pipe(Effect.annotateLogs({ lease, failure: error.text }))
          )
        )

    const create = Effect.fnUntraced(function* (image: string) {
      if (!supported) return undefined
      const lease = `preheat-pull-${randomBytes(8).toString("hex")}`
      const created = yield* containerdLeases.create(lease, pullLeaseLabels(image, yield* Clock.currentTimeMillis)).pipe(Effect.result)
      if (created._tag === "Success") return lease
      if (isGrpcCode(created.failure, grpc.status.UNIMPLEMENTED)) {
        supported = false
        return undefined
      }
      yield* Effect.logDebug("could not create a pull lease; the pull goes without").pipe(
        Effect.annotateLogs({ image, failure: created.failure.text })
      )
      return undefined
    })

    const acquire = (image: string): Effect.Effect<string | undefined> =>
      Effect.suspend(() => {
        const entry = kept.get(image)
        if (entry === undefined) return create(image)
        kept.delete(image)
        return Effect.flatMap(containerdLeases.exists(entry.lease).pipe(Effect.orElseSucceed(() => false)), (exists) =>
          exists ? Effect.succeed(entry.lease) : create(image)
        )
      })

    const release = (image: string, lease: string, pulled: boolean): Effect.Effect<void> =>
      Effect.gen(function* () {
        // The image holds the content now. Deleting the lease is a write to containerd's database
        // (a few ms, more on a busy disk): the tag's status need not wait for it.
        if (pulled) return yield* Effect.asVoid(Effect.forkIn(remove(lease), scope))
        const before = kept.get(image)
        kept.set(image, { lease, keptAt: yield* Clock.currentTimeMillis })
        if (before !== undefined && before.lease !== lease) yield* remove(before.lease)
      })

    const sweep = Effect.gen(function* () {
      for (const image of staleKept(kept, yield* Clock.currentTimeMillis, options.keepFor)) {
        const entry = kept.get(image)
        kept.delete(image)
        if (entry !== undefined) yield* remove(entry.lease)
      }
    })

    /** The leases an earlier daemon left, kept from now; two for one image (two pulls cut at once): the one listed last. */
    const adopt = Effect.gen(function* () {
      const listed = yield* containerdLeases.list.pipe(Effect.orElseSucceed((): ReadonlyArray<LeaseMessage> => []))
      const now = yield* Clock.currentTimeMillis
      for (const { id, labels } of listed) {
        const image = labels[pullLeaseLabel]
        if (image === undefined) continue
        const before = kept.get(image)
        kept.set(image, { lease: id, keptAt: now })
        if (before !== undefined) yield* remove(before.lease)
      }
    })

    yield* adopt
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(options.sweepEvery), sweep)))
    return { acquire, release }
  })
