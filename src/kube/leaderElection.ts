import { hostname } from "node:os"
import { Clock, Data, Duration, Effect, Fiber, Option, Random, Schedule, Schema } from "effect"
import { ApiAccess, retryLogLevel } from "./ApiAccess.ts"
import { KubeApi } from "./KubeApi.ts"
import type { KubeObject } from "./KubeApi.ts"
import { resources } from "./resources.ts"

export interface LeaderElectionOptions {
  /** Where the coordination.k8s.io/v1 Lease lives. */
  readonly namespace: string
  readonly name: string
  /** Unique per process (see candidateIdentity): two replicas sharing one would both lead. */
  readonly identity: string
  /** How long others wait after the last renewal before taking over (client-go: 15 s). */
  readonly leaseDuration?: Duration.Input
  /** The leader steps down when a renewal round could not renew for this long (10 s); less than leaseDuration. */
  readonly renewDeadline?: Duration.Input
  /** Time between attempts to acquire or renew (2 s); less than renewDeadline. */
  readonly retryPeriod?: Duration.Input
}

const leaderElectionDefaults = {
  leaseDuration: Duration.seconds(15),
  renewDeadline: Duration.seconds(10),
  retryPeriod: Duration.seconds(2)
} as const

export type LeadershipStatus =
  | { readonly _tag: "Leading" }
  | { readonly _tag: "Following"; readonly holder: string }
  | { readonly _tag: "Unknown" }

export interface LeaderElector {
  readonly identity: string
  readonly isLeader: Effect.Effect<boolean>
  /** For readiness: leadership is known once we lead or have seen a valid lease held by another. */
  readonly status: Effect.Effect<LeadershipStatus>
  /**
   * Campaigns until interrupted: whileLeader runs only while this process leads, is interrupted
   * (and awaited) when leadership is lost, and runs afresh when it is won again. When the campaign
   * ends (interrupted at shutdown, or whileLeader failed) the lease is released after whileLeader
   * has stopped, so a successor takes over at its next retry instead of waiting for expiry
   * (client-go's ReleaseOnCancel). Releasing is not offered on its own: done while whileLeader
   * still ran, it would let two leaders work at once. One campaign per elector at a time.
   */
  readonly campaign: <E, R>(whileLeader: Effect.Effect<never, E, R>) => Effect.Effect<never, E, R>
}

class InvalidLeaderElectionOptions extends Data.TaggedError("InvalidLeaderElectionOptions")<{
  readonly message: string
}> {}

/** client-go's choice: the host name (a pod's name) plus a random suffix, unique per process. */
export const candidateIdentity = (podName?: string): Effect.Effect<string> =>
  Effect.map(Random.nextIntBetween(0, 0xffff_ffff), (n) => `${podName ?? hostname()}_${n.toString(16).padStart(8, "0")}`)

/** The fields of a Lease spec that leader election reads; others are kept as they are on write. */
const LeaseSpec = Schema.Struct({
  holderIdentity: Schema.optionalKey(Schema.String),
  leaseDurationSeconds: Schema.optionalKey(Schema.Int),
  acquireTime: Schema.optionalKey(Schema.String),
  renewTime: Schema.optionalKey(Schema.String),
  leaseTransitions: Schema.optionalKey(Schema.Int)
})
type LeaseSpec = typeof LeaseSpec.Type
const decodeLeaseSpec = Schema.decodeUnknownOption(LeaseSpec)

/** metav1.MicroTime as the API server writes it: RFC 3339 with exactly six fractional digits. */
export const formatMicroTime = (millis: number): string => new Date(Math.floor(millis)).toISOString().replace(/Z$/, "000Z")

/** When the lease stops being valid, by renewTime + leaseDurationSeconds; unparsable means expired. */
const expiresAt = (spec: LeaseSpec): number => {
  const renewed = spec.renewTime === undefined ? Number.NaN : Date.parse(spec.renewTime)
  return Number.isFinite(renewed) ? renewed + (spec.leaseDurationSeconds ?? 0) * 1000 : Number.NEGATIVE_INFINITY
}

const validate = (leaseMillis: number, renewMillis: number, retryMillis: number) =>
  leaseMillis < 1000
    ? "leaseDuration must be at least 1 second"
    : leaseMillis <= renewMillis
      ? "leaseDuration must be greater than renewDeadline"
      : renewMillis <= retryMillis
        ? "renewDeadline must be greater than retryPeriod"
        : retryMillis <= 0
          ? "retryPeriod must be positive"
          : undefined

/**
 * Leader election on a Lease with client-go's semantics: acquire when the lease is absent,
 * expired or already ours; renew retryPeriod after each renewal, in a round that steps down when
 * it could not renew within renewDeadline (at most retryPeriod + renewDeadline after the last
 * renewal landed, before the lease expires for others at leaseDuration after they saw it land, so
 * two leaders never overlap); every write is resourceVersion-checked, so of two candidates racing
 * for an expired lease exactly one wins and the other sees Conflict. A lease has expired for us
 * when both its renewTime and our first sight of its current record are leaseDuration old.
 */
export const makeLeaderElector = (options: LeaderElectionOptions): Effect.Effect<LeaderElector, InvalidLeaderElectionOptions, KubeApi> =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const access = yield* Effect.serviceOption(ApiAccess)
    const clock = yield* Clock.Clock
    const leaseSeconds = Math.ceil(Duration.toSeconds(options.leaseDuration ?? leaderElectionDefaults.leaseDuration))
    const leaseMillis = leaseSeconds * 1000
    const renewMillis = Duration.toMillis(options.renewDeadline ?? leaderElectionDefaults.renewDeadline)
    const retryMillis = Duration.toMillis(options.retryPeriod ?? leaderElectionDefaults.retryPeriod)
    const invalid = validate(leaseMillis, renewMillis, retryMillis)
    if (invalid !== undefined) return yield* new InvalidLeaderElectionOptions({ message: invalid })

    const { identity } = options
    const key = { namespace: options.namespace, name: options.name }
    const now = () => clock.currentTimeMillisUnsafe()
    const everyRetryPeriod = Schedule.spaced(Duration.millis(retryMillis))

    let leading = false
    /** When our last successful write started: from then on we held the lease for leaseDuration. */
    let lastRenew: number | undefined
    /**
     * The holder and expiry of the lease as last read or written, and the record (holder, renewTime,
     * duration) with when we first saw it: a record unchanged for leaseDuration by our own clock has
     * expired, however old its renewTime (client-go's observedTime), which covers a renewal that took
     * long to land as well as clocks that disagree.
     */
    let observed: { readonly holder: string; readonly expiresAt: number; readonly record: string; readonly seenAt: number } | undefined

    const recordOf = (spec: LeaseSpec) => `${spec.holderIdentity ?? ""} ${spec.renewTime ?? ""} ${spec.leaseDurationSeconds ?? ""}`

    const won = (at: number, spec: LeaseSpec): true => {
      lastRenew = at
      observed = { holder: identity, expiresAt: at + leaseMillis, record: recordOf(spec), seenAt: at }
      return true
    }

    const ourSpec = (at: number, previous: LeaseSpec | undefined) => {
      const renewal = previous?.holderIdentity === identity
      return {
        holderIdentity: identity,
        leaseDurationSeconds: leaseSeconds,
        acquireTime: renewal && previous?.acquireTime !== undefined ? previous.acquireTime : formatMicroTime(at),
        renewTime: formatMicroTime(at),
        leaseTransitions: (previous?.leaseTransitions ?? 0) + (previous === undefined || renewal ? 0 : 1)
      }
    }

    const specOf = (lease: KubeObject): Record<string, unknown> => (lease.spec ?? {}) as Record<string, unknown>

    /** One client-go tryAcquireOrRenew: true when we hold the lease for leaseDuration from `at`. */
    const attempt: Effect.Effect<boolean> = Effect.gen(function* () {
      const at = now()
      const current = yield* api.get(resources.lease, key).pipe(
        Effect.map(Option.some),
        Effect.catchTag("NotFound", () => Effect.succeedNone)
      )
      if (Option.isNone(current)) {
        const spec = ourSpec(at, undefined)
        yield* api.create(resources.lease, {
          apiVersion: resources.lease.apiVersion,
          kind: resources.lease.kind,
          metadata: { name: key.name, namespace: key.namespace },
          spec
        })
        return won(at, spec)
      }
      const lease = current.value
      const spec = decodeLeaseSpec(specOf(lease))
      if (Option.isNone(spec)) {
        yield* Effect.logWarning("lease spec is malformed; not taking it over", lease.spec)
        return false
      }
      const holder = spec.value.holderIdentity ?? ""
      const record = recordOf(spec.value)
      const seenAt = observed?.record === record ? observed.seenAt : at
      const stillFor = (spec.value.leaseDurationSeconds ?? 0) * 1000
      observed = { holder, record, seenAt, expiresAt: Math.max(expiresAt(spec.value), seenAt + stillFor) }
      if (holder !== "" && holder !== identity && observed.expiresAt > at) return false
      const ours = ourSpec(at, spec.value)
      yield* api.update(resources.lease, { ...lease, spec: { ...specOf(lease), ...ours } })
      return won(at, ours)
    }).pipe(
      Effect.catchTags({
        // Another candidate wrote first: the next read shows who.
        Conflict: () => Effect.succeed(false),
        AlreadyExists: () => Effect.succeed(false)
      }),
      Effect.catch((error) => Effect.as(Effect.logWithLevel(retryLogLevel(access, error))("lease request failed", error), false))
    )

    /** An attempt that gives up at the deadline: a hung request must not keep a leader leading. */
    const attemptWithin = (millis: number) =>
      attempt.pipe(Effect.timeoutOption(Duration.millis(millis)), Effect.map(Option.getOrElse(() => false)))

    const acquire = attemptWithin(renewMillis).pipe(Effect.repeat({ schedule: everyRetryPeriod, until: (won) => won }))

    /** Someone else holds the lease as last read. */
    const takenOver = () => observed !== undefined && observed.holder !== identity && observed.holder !== ""

    /**
     * One renewal round: an attempt every retryPeriod (the last wait cut short at the deadline)
     * until one renews, the lease is seen taken, or renewDeadline from the round's start has passed.
     */
    const renewalRound = Effect.suspend(() => {
      const deadline = now() + renewMillis
      const untilDeadline = everyRetryPeriod.pipe(
        Schedule.modifyDelay(() => Effect.sync(() => Duration.millis(Math.max(0, Math.min(retryMillis, deadline - now())))))
      )
      const tryRenew = Effect.suspend(() =>
        now() >= deadline
          ? Effect.succeed("expired" as const)
          : Effect.map(attemptWithin(deadline - now()), (renewed) => (renewed ? "renewed" : takenOver() ? "taken" : "failed"))
      )
      return tryRenew.pipe(Effect.repeat({ schedule: untilDeadline, while: (outcome) => outcome === "failed" }))
    })

    /**
     * Renews in rounds, as client-go: retryPeriod after a renewal, a round tries every retryPeriod
     * for up to renewDeadline; returns (no longer leading) why leadership was lost. A round's deadline
     * counts from its start, so a slow server (a renewal taking seconds) does not cost leadership:
     * others count leaseDuration from when they saw the renewal land, later than this round's end.
     */
    const keepRenewing = renewalRound.pipe(
      Effect.repeat({ schedule: everyRetryPeriod, while: (outcome) => outcome === "renewed" }),
      Effect.delay(Duration.millis(retryMillis)),
      Effect.map((outcome) => {
        leading = false
        return outcome === "taken" ? `lease taken over by ${observed?.holder}` : "could not renew the lease within renewDeadline"
      })
    )

    const lead = <E, R>(whileLeader: Effect.Effect<never, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          leading = true
        }).pipe(Effect.andThen(Effect.logInfo("became leader")), Effect.andThen(Effect.forkChild(whileLeader))),
        (fiber) =>
          Effect.raceFirst(keepRenewing, Fiber.join(fiber)).pipe(Effect.flatMap((why) => Effect.logWarning("lost leadership", why))),
        (fiber) =>
          Effect.sync(() => {
            leading = false
          }).pipe(Effect.andThen(Fiber.interrupt(fiber)))
      )

    /** client-go's release: clear the holder and shorten the lease so a successor need not wait. */
    const release: Effect.Effect<void> = Effect.gen(function* () {
      leading = false
      if (lastRenew === undefined) return
      const lease = yield* api.get(resources.lease, key)
      const spec = decodeLeaseSpec(specOf(lease))
      if (Option.isNone(spec) || spec.value.holderIdentity !== identity) return
      const at = now()
      yield* api.update(resources.lease, {
        ...lease,
        spec: {
          ...specOf(lease),
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: formatMicroTime(at),
          renewTime: formatMicroTime(at)
        }
      })
      lastRenew = undefined
      observed = { holder: "", expiresAt: at, record: "", seenAt: at }
      yield* Effect.logInfo("released the lease")
    }).pipe(
      Effect.timeoutOption(Duration.millis(renewMillis)),
      Effect.catch((error) => Effect.logWarning("could not release the lease; successors wait for it to expire", error)),
      Effect.asVoid
    )

    const campaign = <E, R>(whileLeader: Effect.Effect<never, E, R>): Effect.Effect<never, E, R> =>
      Effect.forever(Effect.andThen(acquire, lead(whileLeader))).pipe(
        Effect.ensuring(release),
        Effect.annotateLogs({ lease: `${key.namespace}/${key.name}`, identity })
      )

    return {
      identity,
      isLeader: Effect.sync(() => leading),
      status: Effect.sync((): LeadershipStatus => {
        if (leading) return { _tag: "Leading" }
        if (observed !== undefined && observed.holder !== "" && observed.holder !== identity && observed.expiresAt > now()) {
          return { _tag: "Following", holder: observed.holder }
        }
        return { _tag: "Unknown" }
      }),
      campaign
    }
  })
