import { Clock, Effect, Result } from "effect"
import type { Scope } from "effect"
import type { ImageTagStatus, ReferenceObject } from "../../src/api/nodeImage.ts"
import { statusCounters } from "../../src/api/nodeImageCounters.ts"
import { nodeImageView } from "../../src/controller/nodeImage/view.ts"
import { nodeImageSpecs } from "../../src/daemon/nodeImageSpec.ts"
import type { SpecView } from "../../src/daemon/nodeImageSpec.ts"
import { tagKey } from "../../src/daemon/tagTask.ts"
import { throttledRetryMessage } from "../../src/daemon/pullMessages.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { reflect } from "../../src/kube/reflector.ts"
import { makeStore } from "../../src/kube/store.ts"
import type { Change } from "../../src/kube/store.ts"
import { watcher } from "../../src/kube/watcher.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { rfc3339 } from "../../src/api/time.ts"
import { isOutcome, reportDue } from "../../src/daemon/statusCadence.ts"
import type { StatusCadence } from "../../src/daemon/statusCadence.ts"
import { Scheduler } from "../../src/workqueue/Scheduler.ts"

export interface SimulatedDaemonOptions {
  /** How long a pull takes, from the moment its tag is seen. */
  readonly pullMs: number
  /** Which pulls fail, and with what message. */
  readonly failure?: (node: string, image: string, tag: string) => string | undefined
  /**
   * Whether the registry throttles a pull attempt (from 1): reported Pulling with the real daemon's
   * RegistryThrottled message, and tried again `throttleBackoffMs` later (default 2 s).
   */
  readonly throttled?: (node: string, image: string, attempt: number) => boolean
  readonly throttleBackoffMs?: number
  /**
   * A registry that checks credentials: given the image and the pull secrets its entry names, as
   * read from the API server when the pull ends (the real daemon reads them at each attempt), a
   * message fails the pull.
   */
  readonly refusesCredentials?: (image: string, secrets: ReadonlyArray<KubeObject>) => string | undefined
  /** Nodes whose daemon never answers. */
  readonly silent?: (node: string) => boolean
  /** The manifest digest a pull resolves to, asked when it starts (a tag can move meanwhile); none by default. */
  readonly digest?: (node: string, image: string, tag: string) => string | undefined
  /** Whether a pull that succeeds presented credentials the registry took (the tag status's `authenticated`); no by default. */
  readonly authenticated?: (node: string, image: string, tag: string) => boolean
  /**
   * When reports are written, as the shipped daemon writes them (daemon/statusCadence.ts: a pull's
   * Pulling once it outlives the start delay, outcomes of pulls ending close together in one write);
   * absent, each report is written at once, for tests that look for each.
   */
  readonly cadence?: StatusCadence
  /** Count the pulls of each node, image and tag (tests read them; a large benchmark need not). */
  readonly countPulls?: boolean
}

export interface SimulatedDaemons {
  readonly pulls: Map<string, number>
  /** The image of every pull under way, one entry per pull. */
  readonly pulling: () => Iterable<string>
}

type ImageStatuses = Readonly<Record<string, { readonly tags: ReadonlyArray<ImageTagStatus> }>>

/** Each report at once. */
const atOnce: StatusCadence = { progressInterval: 0, startDelay: 0, outcomeDelay: 0 }

/**
 * Daemons for every node, simulated in one fiber set: each reports a tag Pulling as soon as it
 * appears, then Succeeded (or Failed) pullMs later, writing the whole status it owns as the real
 * daemon does, when the real daemon would (`cadence`). Pull counts are kept so tests can check nothing is pulled twice. Each node's spec
 * is read with the real daemon's decoder: a spec it cannot read stalls the node, and a tag it
 * cannot read is reported Failed at once with the decoder's words, as the real daemon does.
 *
 * A daemon's own state is the status it last wrote, as the API server stored it (shared with the
 * store, so a simulated cluster of 10,000 nodes costs little beyond the stored objects), and the
 * pulls in flight.
 */
export const simulateDaemons = Effect.fnUntraced(function* (
  options: SimulatedDaemonOptions
): Effect.fn.Return<SimulatedDaemons, never, KubeApi | Scheduler | Scope.Scope> {
  const api = yield* KubeApi
  const scope = yield* Effect.scope
  const cadence = options.cadence ?? atOnce
  const written = new Map<string, ImageStatuses>()
  /** Pulls under way: id -> image. */
  const inFlight = new Map<string, string>()
  const pulls = new Map<string, number>()
  /** Per node: reports not written yet (image -> tag -> status), tags still to finish, starts whose Pulling is not written, the last write. */
  const nodes = new Map<
    string,
    { pending: Map<string, Map<string, ImageTagStatus>>; running: Set<string>; unwrittenStarts: Map<string, number>; lastWriteAt: number }
  >()
  const stateOf = (node: string) => {
    let state = nodes.get(node)
    if (state === undefined) {
      nodes.set(
        node,
        (state = { pending: new Map(), running: new Set(), unwrittenStarts: new Map(), lastWriteAt: Number.NEGATIVE_INFINITY })
      )
    }
    return state
  }
  // One key per node, as the real daemon's status queue: the earliest due wins, a write carries every report.
  const writes = yield* (yield* Scheduler).queue("simulated-daemon-status")

  /** Hands one tag's report to its node's next write, due when the cadence says. */
  const report = (node: string, image: string, status: ImageTagStatus) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const state = stateOf(node)
      const key = `${image}\u0000${status.tag}`
      let tags = state.pending.get(image)
      if (tags === undefined) state.pending.set(image, (tags = new Map()))
      const previous = tags.get(status.tag) ?? written.get(node)?.[image]?.tags.find((t) => t.tag === status.tag)
      tags.set(status.tag, status)
      const changed = previous === undefined || previous.phase !== status.phase || previous.version !== status.version
      if (isOutcome(status.phase)) {
        state.running.delete(key)
        state.unwrittenStarts.delete(key)
      } else {
        state.running.add(key)
        if (changed) state.unwrittenStarts.set(key, now)
      }
      const due = reportDue(cadence, status.phase, {
        now,
        lastWriteAt: state.lastWriteAt,
        changed,
        unwrittenStart: state.unwrittenStarts.get(key),
        othersRunning: state.running.size > 0
      })
      yield* writes.add(node, Math.max(0, due - now))
    })

  /** The node's status with every pending report in it, written whole. */
  const write = (node: string) =>
    Effect.gen(function* () {
      const state = stateOf(node)
      if (state.pending.size === 0) return
      const view = nodeImages.view(node)
      if (view === undefined || Result.isFailure(view)) return
      const reports = state.pending
      state.pending = new Map()
      state.unwrittenStarts.clear()
      state.lastWriteAt = yield* Clock.currentTimeMillis
      const before = written.get(node) ?? {}
      const imageStatuses: Record<string, { readonly tags: ReadonlyArray<ImageTagStatus> }> = { ...before }
      for (const [image, tags] of reports) {
        imageStatuses[image] = { tags: [...(before[image]?.tags ?? []).filter((t) => !tags.has(t.tag)), ...tags.values()] }
      }
      const stored = yield* api
        .patch(
          resources.nodeImage,
          { name: node },
          { status: { ...statusCounters(view.success.spec, imageStatuses), imageStatuses } },
          "status"
        )
        .pipe(Effect.option)
      if (stored._tag === "Some") {
        written.set(node, (nodeImageView(stored.value).status?.imageStatuses ?? {}) as ImageStatuses)
      }
    })
  yield* Effect.forkScoped(
    Effect.forever(
      Effect.gen(function* () {
        const node = yield* writes.take
        yield* Effect.ensuring(write(node), writes.done(node))
      })
    )
  )

  /** The pull secrets an entry names, as the API server has them now (those it has). */
  const secretsOf = (refs: ReadonlyArray<ReferenceObject>) =>
    Effect.forEach(refs, (ref) =>
      api.get(resources.secret, { namespace: ref.namespace ?? "", name: ref.name ?? "" }).pipe(
        Effect.map((secret) => [secret]),
        Effect.orElseSucceed((): Array<KubeObject> => [])
      )
    ).pipe(Effect.map((found) => found.flat()))

  const pull = (node: string, image: string, tag: string, version: number, id: string, pullSecrets: ReadonlyArray<ReferenceObject>) =>
    Effect.gen(function* () {
      const start = yield* Clock.currentTimeMillis
      const digest = options.digest?.(node, image, tag)
      yield* report(node, image, { tag, phase: "Pulling", version, progress: 0, startTime: rfc3339(start) })
      yield* Effect.sleep(options.pullMs)
      const backoff = options.throttleBackoffMs ?? 2000
      for (let attempt = 1; options.throttled?.(node, image, attempt) === true; attempt++) {
        const detail = "registry throttled the pull: 429 Too Many Requests - Server message: toomanyrequests"
        const message = throttledRetryMessage(attempt, 10, detail, backoff)
        yield* report(node, image, { tag, phase: "Pulling", version, progress: 0, startTime: rfc3339(start), message })
        yield* Effect.sleep(backoff + options.pullMs)
      }
      const end = yield* Clock.currentTimeMillis
      if (options.countPulls !== false) {
        const key = `${node}/${image}:${tag}`
        pulls.set(key, (pulls.get(key) ?? 0) + 1)
      }
      const refused =
        options.refusesCredentials === undefined ? undefined : options.refusesCredentials(image, yield* secretsOf(pullSecrets))
      const failed = options.failure?.(node, image, tag) ?? refused
      yield* report(node, image, {
        tag,
        phase: failed === undefined ? "Succeeded" : "Failed",
        version,
        progress: failed === undefined ? 100 : 0,
        startTime: rfc3339(start),
        completionTime: rfc3339(end),
        ...(failed === undefined
          ? {
              imageID: `sha256:${image}-${tag}`,
              ...(digest === undefined ? {} : { digest }),
              ...(options.authenticated?.(node, image, tag) === true ? { authenticated: true } : {})
            }
          : { message: failed })
      })
      inFlight.delete(id)
    })

  /** Whether this daemon already took up this version of the tag: pulling it, or reported it (written or not yet). */
  const taken = (node: string, image: string, tag: string, version: number, id: string): boolean =>
    inFlight.has(id) ||
    (nodes.get(node)?.pending.get(image)?.get(tag)?.version ?? -1) >= version ||
    (written.get(node)?.[image]?.tags.some((t) => t.tag === tag && (t.version ?? 0) >= version) ?? false)

  /** A tag the daemon cannot read: Failed at once, never pulled. */
  const refuse = (node: string, image: string, tag: string, version: number, id: string, why: string) =>
    Effect.gen(function* () {
      const now = rfc3339(yield* Clock.currentTimeMillis)
      yield* report(node, image, { tag, phase: "Failed", version, progress: 0, startTime: now, completionTime: now, message: why })
      inFlight.delete(id)
    })

  const onChange = (change: Change<SpecView>): Effect.Effect<void> => {
    if (change.type === "deleted") return Effect.void
    const node = change.current.raw.metadata.name ?? ""
    if (options.silent?.(node)) return Effect.void
    const view = change.current.view
    if (Result.isFailure(view)) return Effect.void
    const old = change.type === "modified" ? change.old.view : undefined
    const previous = old !== undefined && Result.isSuccess(old) ? (old.success.spec.images ?? {}) : {}
    const effects: Array<Effect.Effect<void>> = []
    for (const [image, entry] of Object.entries(view.success.spec.images ?? {})) {
      // Entries shared with the previous version hold no new tags.
      if (previous[image] === entry) continue
      for (const spec of entry.tags) {
        const id = `${node}/${image}:${spec.tag}@${spec.version}`
        if (taken(node, image, spec.tag, spec.version, id)) continue
        inFlight.set(id, image)
        const why = view.success.unreadable.get(tagKey(image, spec.tag))
        const work =
          why === undefined
            ? pull(node, image, spec.tag, spec.version, id, entry.pullSecrets ?? [])
            : refuse(node, image, spec.tag, spec.version, id, why)
        effects.push(Effect.forkIn(work, scope))
      }
    }
    return Effect.all(effects, { discard: true })
  }
  // One decoder per node, as each daemon has its own: it reads again only what its node's spec changed.
  const decoders = new Map<string, (object: KubeObject) => SpecView>()
  const decode = (object: KubeObject): SpecView => {
    const node = object.metadata.name ?? ""
    let decoder = decoders.get(node)
    if (decoder === undefined) decoders.set(node, (decoder = nodeImageSpecs()))
    return decoder(object)
  }
  const nodeImages = makeStore(resources.nodeImage, { decode })
  yield* reflect(nodeImages, watcher(resources.nodeImage, {}), onChange)
  return { pulls, pulling: () => inFlight.values() }
})
