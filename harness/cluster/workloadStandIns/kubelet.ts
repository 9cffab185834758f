// The dev cluster's kubelets: a pod bound to a simulated node starts once its images are on that
// node. Presence and pulls go through the node's own container runtime (the one its preheat
// daemon pulls through), so an image preheat pulled beforehand starts the pod at once, and a
// missing one costs the pull's time, reported as the kubelet reports it (Pulling / Pulled events,
// containerStatuses[].imageID). No containers run: a started pod is Running and Ready at once.
import { randomBytes } from "node:crypto"
import { Clock, Duration, Effect, Option, Result } from "effect"
import { formatImageReference, parseImageReference, pullReference, toNodeImageTask } from "../../../src/api/imageReference.ts"
import { rfc3339 } from "../../../src/api/time.ts"
import type { CriRuntime } from "../../../src/cri/CriRuntime.ts"
import type { KubeApi, KubeObject } from "../../../src/kube/KubeApi.ts"
import { isPlainObject } from "../../../src/json/plainObject.ts"
import type { Outcome } from "../../../src/workqueue/runWorkers.ts"
import type { WorkloadContext } from "./context.ts"
import { isTerminating, spec, status, stringAt } from "./objects.ts"
import { type ContainerStart, goDuration, runningStatus, waitingStatus } from "./podStatus.ts"
import { event, patchIn } from "./writes.ts"

const report = event("kubelet")

const pullTimeout = Duration.minutes(10)
/** The kubelet's image pull back-off starts at 10 s (kept, not doubled, here); a bad name is retried as often. */
const pullBackOff = Duration.seconds(10)

interface Container {
  readonly name: string
  readonly image: string
}

const containersOf = (pod: KubeObject, field: "containers" | "initContainers"): Array<Container> => {
  const list = spec(pod)[field]
  return Array.isArray(list)
    ? list.filter(isPlainObject).map((c) => ({ name: String(c["name"] ?? ""), image: String(c["image"] ?? "") }))
    : []
}

type ImageResult =
  | { readonly _tag: "Ready"; readonly image: string; readonly imageID: string }
  | { readonly _tag: "Failed"; readonly reason: "InvalidImageName" | "ErrImagePull"; readonly message: string }

/** The image on the node, pulled first if missing (IfNotPresent, whatever imagePullPolicy says). */
const ensureImage = (runtime: CriRuntime["Service"], pod: KubeObject, image: string) =>
  Effect.gen(function* () {
    const parsed = parseImageReference(image)
    if (Result.isFailure(parsed)) {
      const message = `Failed to apply default image tag "${image}": couldn't parse image name "${image}": ${parsed.failure.reason}`
      yield* report(pod, "Warning", "InspectFailed", message)
      return { _tag: "Failed", reason: "InvalidImageName", message } satisfies ImageResult
    }
    const reference = pullReference(toNodeImageTask(parsed.success))
    // containerd names images in full (docker.io/library/nginx:latest), and so do container statuses.
    const ref = parsed.success
    const fullName = formatImageReference(ref.tag === undefined && ref.digest === undefined ? { ...ref, tag: "latest" } : ref)
    const present = yield* runtime.imageStatus(reference).pipe(Effect.orElseSucceed(() => Option.none()))
    if (Option.isSome(present)) {
      yield* report(pod, "Normal", "Pulled", `Container image "${image}" already present on machine`)
      return { _tag: "Ready", image: fullName, imageID: present.value.repoDigests[0] ?? present.value.id } satisfies ImageResult
    }
    yield* report(pod, "Normal", "Pulling", `Pulling image "${image}"`)
    const started = yield* Clock.currentTimeMillis
    const pulled = yield* runtime.pullImage({ image: reference, timeout: pullTimeout }).pipe(Effect.result)
    if (Result.isFailure(pulled)) {
      const message = `Failed to pull image "${image}": ${pulled.failure.message}`
      yield* report(pod, "Warning", "Failed", message)
      yield* report(pod, "Warning", "Failed", "Error: ErrImagePull")
      return { _tag: "Failed", reason: "ErrImagePull", message } satisfies ImageResult
    }
    const took = goDuration((yield* Clock.currentTimeMillis) - started)
    const info = yield* runtime.imageStatus(reference).pipe(Effect.orElseSucceed(() => Option.none()))
    const size = Option.match(info, { onNone: () => 0, onSome: (i) => i.size })
    const message = `Successfully pulled image "${image}" in ${took} (${took} including waiting). Image size: ${size} bytes.`
    yield* report(pod, "Normal", "Pulled", message)
    const imageID = Option.match(info, { onNone: () => pulled.success, onSome: (i) => i.repoDigests[0] ?? i.id })
    return { _tag: "Ready", image: fullName, imageID } satisfies ImageResult
  })

/** Addresses: node-N is 10.0.0.N, its pods 10.244.N.2 onwards. */
const makeAddresses = () => {
  const next = new Map<string, number>()
  const index = (node: string) => Number(/(\d+)$/.exec(node)?.[1] ?? "0") % 256
  return {
    hostIP: (node: string) => `10.0.0.${index(node)}`,
    podIP: (node: string) => {
      const n = next.get(node) ?? 0
      next.set(node, n + 1)
      return `10.244.${index(node)}.${2 + (n % 252)}`
    }
  }
}

export const reconcileKubelet = (ctx: WorkloadContext) => {
  const addresses = makeAddresses()
  /** When a pod whose pull failed may try again (its own status writes must not retry it at once). */
  const backOffUntil = new Map<string, number>()
  return (key: string): Effect.Effect<Outcome, unknown, KubeApi> =>
    Effect.gen(function* () {
      const pod = ctx.stores.pods.get(key)
      const node = pod === undefined ? undefined : stringAt(spec(pod), "nodeName")
      if (pod === undefined || node === undefined || isTerminating(pod)) {
        backOffUntil.delete(key)
        return {}
      }
      const wait = (backOffUntil.get(key) ?? 0) - (yield* Clock.currentTimeMillis)
      if (wait > 0) return { requeueAfter: Duration.millis(wait) }
      const runtime = ctx.runtimes.get(node)
      // A node whose simulated kubelet has not started yet (it joined a moment ago), or whose runtime is
      // in another process (`preheat apiserver --workloads`), leaves its pods bound and Pending; only
      // a change to the pod enqueues it again, so nothing spins.
      if (runtime === undefined || stringAt(status(pod), "phase") === "Running") return {}
      const containers = containersOf(pod, "containers")
      const scheduled = scheduledAt(pod) ?? rfc3339(yield* Clock.currentTimeMillis)
      const started = stringAt(status(pod), "startTime") ?? rfc3339(yield* Clock.currentTimeMillis)
      const times = () => Effect.map(Clock.currentTimeMillis, (now) => ({ scheduled, started, now: rfc3339(now) }))
      const hostIP = addresses.hostIP(node)
      const creating = waitingStatus(containers, yield* times(), hostIP, { reason: "ContainerCreating" })
      let current = yield* patchIn(ctx.stores.pods, pod, { status: creating }, "status")

      const starts: Array<ContainerStart> = []
      for (const container of [...containersOf(pod, "initContainers"), ...containers]) {
        const result = yield* ensureImage(runtime, pod, container.image)
        if (result._tag === "Failed") {
          const waiting = { reason: result.reason, message: result.message }
          const failed = waitingStatus(containers, yield* times(), hostIP, waiting)
          current = yield* patchIn(ctx.stores.pods, current, { status: failed }, "status")
          backOffUntil.set(key, (yield* Clock.currentTimeMillis) + Duration.toMillis(pullBackOff))
          return { requeueAfter: pullBackOff }
        }
        if (containers.includes(container)) {
          const containerID = `containerd://${randomBytes(32).toString("hex")}`
          starts.push({ name: container.name, image: result.image, imageID: result.imageID, containerID })
        }
      }
      const running = runningStatus(starts, yield* times(), hostIP, addresses.podIP(node))
      yield* patchIn(ctx.stores.pods, current, { status: running }, "status")
      backOffUntil.delete(key)
      for (const c of starts) {
        yield* report(pod, "Normal", "Created", `Created container: ${c.name}`)
        yield* report(pod, "Normal", "Started", `Started container ${c.name}`)
      }
      return {}
    }).pipe(Effect.catchTag("NotFound", () => Effect.succeed({})))
}

const scheduledAt = (pod: KubeObject): string | undefined => {
  const conditions = status(pod)["conditions"]
  const scheduled = Array.isArray(conditions) ? conditions.find((c) => isPlainObject(c) && c["type"] === "PodScheduled") : undefined
  return isPlainObject(scheduled) && typeof scheduled["lastTransitionTime"] === "string" ? scheduled["lastTransitionTime"] : undefined
}
