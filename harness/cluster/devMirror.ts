// What `preheat dev --p2p`'s simulated registry served, where kubectl and the terminal show it: the
// ConfigMap `simulated-registry-served` in namespace `default` (totals, and per image its bytes,
// pulls and simulated makespan), rewritten once a second while pulls move bytes; and one line per
// image on dev's output once its pulls have been quiet for a few seconds; and the two totals as
// Prometheus counters, on dev's /metrics when it serves one (--metrics-port).
import { Clock, Console, Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import { Counter } from "prom-client"
import type { Registry } from "prom-client"
import { resources } from "../../src/kube/resources.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import type { ImageServed, MirrorTotals, PeerMirror } from "../layers/simulatedRuntime/peerMirror.ts"

export const servedConfigMap = { namespace: "default", name: "simulated-registry-served" } as const

/** How long an image's pulls stay quiet before its line is printed. */
const quietMs = 3000

/** The ConfigMap's data: byte counts as decimal strings, the images as JSON (ImageServed, times in ms since the epoch). */
const servedData = (totals: MirrorTotals): Readonly<Record<string, string>> => ({
  registryBytes: String(totals.registryBytes),
  peerBytes: String(totals.peerBytes),
  images: JSON.stringify(totals.images)
})

const gib = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(2)} GiB`

/** One image's line: what the registry and the peers sent, over how many pulls and how long. */
export const servedLine = (served: ImageServed): string => {
  const makespan =
    served.firstStart === undefined || served.lastEnd === undefined
      ? ""
      : `, first pull to last ${((served.lastEnd - served.firstStart) / 1000).toFixed(1)}s`
  return `simulated registry: ${served.image}: ${gib(served.registryBytes)} from the registry, ${gib(served.peerBytes)} from peers, ${served.pulls} pulls${makespan}`
}

const write = (totals: MirrorTotals) =>
  Effect.gen(function* () {
    const api = yield* KubeApi
    const data = servedData(totals)
    const object: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { ...servedConfigMap }, data }
    yield* api.patch(resources.configMap, servedConfigMap, { data }).pipe(
      Effect.catchTag("NotFound", () => api.create(resources.configMap, object)),
      Effect.catch((error) =>
        Effect.logWarning("simulated registry: counts not written").pipe(Effect.annotateLogs({ error: String(error) }))
      )
    )
  })

/**
 * The mirror's totals as counters in `registry`, read from the mirror at each scrape: the figures
 * the ConfigMap gets, not a second count that could drift from them. No image label: the images are
 * whatever kubectl applies; the ConfigMap has them one by one.
 */
const registerServedCounters = (registry: Registry, mirror: PeerMirror): void => {
  const counted = { registryBytes: 0, peerBytes: 0 }
  /** Adds to `counter` what `source` served since the last scrape (prom-client counters only go up). */
  const catchUp = (counter: Counter, source: keyof typeof counted) => {
    const served = mirror.bytesServed[source]
    if (served > counted[source]) counter.inc(served - counted[source])
    counted[source] = served
  }
  new Counter({
    name: "preheat_simulated_registry_served_bytes_total",
    help: "Bytes the simulated registry of preheat dev --p2p served, all images together (ConfigMap simulated-registry-served, registryBytes).",
    registers: [registry],
    collect() {
      catchUp(this, "registryBytes")
    }
  })
  new Counter({
    name: "preheat_simulated_peer_served_bytes_total",
    help: "Bytes the simulated nodes of preheat dev --p2p served each other through the peer mirror (ConfigMap simulated-registry-served, peerBytes).",
    registers: [registry],
    collect() {
      catchUp(this, "peerBytes")
    }
  })
}

/**
 * Publishes the mirror's counts for the life of the scope; `print` shows a line (dev's output). The
 * counters go into Metrics' registry, which dev serves on /metrics with --metrics-port.
 */
export const publishServed = (
  mirror: PeerMirror,
  print: (line: string) => Effect.Effect<void> = (line) => Console.log(line)
): Effect.Effect<void, never, KubeApi | Metrics | Scope.Scope> =>
  Effect.gen(function* () {
    registerServedCounters((yield* Metrics).registry, mirror)
    let written = -1
    /** By image: the counts last printed, and when they last moved. */
    const printed = new Map<string, string>()
    const moved = new Map<string, { readonly line: string; readonly at: number }>()
    const tick = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (mirror.changes !== written) {
        written = mirror.changes
        const totals = mirror.snapshot()
        yield* write(totals)
        for (const served of totals.images) {
          const line = servedLine(served)
          if (printed.get(served.image) !== line && moved.get(served.image)?.line !== line) moved.set(served.image, { line, at: now })
        }
      }
      for (const [image, { at, line }] of moved) {
        if (now - at < quietMs) continue
        moved.delete(image)
        printed.set(image, line)
        yield* print(line)
      }
    })
    yield* Effect.forkScoped(Effect.repeat(tick, Schedule.spaced(Duration.seconds(1))))
  })
