// The pod status a kubelet reports, as pure functions: while the containers are being created
// (images pulled), once they run, and when an image cannot be pulled.
import type { Json } from "./objects.ts"

export interface ContainerStart {
  readonly name: string
  /** The image as the runtime names it (docker.io/library/nginx:1.25). */
  readonly image: string
  /** The runtime's image reference: a repo digest where it has one, else the image id. */
  readonly imageID: string
  readonly containerID: string
}

const condition = (type: string, ready: boolean, now: string, reason?: string, message?: string) => ({
  type,
  status: ready ? "True" : "False",
  lastProbeTime: null,
  lastTransitionTime: now,
  ...(reason === undefined ? {} : { reason }),
  ...(message === undefined ? {} : { message })
})

const notReady = (names: ReadonlyArray<string>, now: string) => {
  const message = `containers with unready status: [${names.join(" ")}]`
  return [
    condition("ContainersReady", false, now, "ContainersNotReady", message),
    condition("Ready", false, now, "ContainersNotReady", message)
  ]
}

/** Pending, containers waiting with `reason` (ContainerCreating, ErrImagePull, InvalidImageName). */
export const waitingStatus = (
  containers: ReadonlyArray<{ readonly name: string; readonly image: string }>,
  times: { readonly scheduled: string; readonly started: string; readonly now: string },
  hostIP: string,
  waiting: { readonly reason: string; readonly message?: string }
): Json => ({
  phase: "Pending",
  hostIP,
  hostIPs: [{ ip: hostIP }],
  startTime: times.started,
  conditions: [
    condition("PodScheduled", true, times.scheduled),
    condition("Initialized", true, times.started),
    ...notReady(
      containers.map((c) => c.name),
      times.now
    )
  ],
  containerStatuses: containers.map((c) => ({
    name: c.name,
    image: c.image,
    imageID: "",
    ready: false,
    started: false,
    restartCount: 0,
    state: { waiting }
  }))
})

/** Running and Ready: every container started (readiness probes are not simulated). */
export const runningStatus = (
  containers: ReadonlyArray<ContainerStart>,
  times: { readonly scheduled: string; readonly started: string; readonly now: string },
  hostIP: string,
  podIP: string
): Json => ({
  phase: "Running",
  hostIP,
  hostIPs: [{ ip: hostIP }],
  podIP,
  podIPs: [{ ip: podIP }],
  startTime: times.started,
  conditions: [
    condition("PodReadyToStartContainers", true, times.now),
    condition("Initialized", true, times.started),
    condition("Ready", true, times.now),
    condition("ContainersReady", true, times.now),
    condition("PodScheduled", true, times.scheduled)
  ],
  containerStatuses: containers.map((c) => ({
    name: c.name,
    image: c.image,
    imageID: c.imageID,
    containerID: c.containerID,
    ready: true,
    started: true,
    restartCount: 0,
    lastState: {},
    state: { running: { startedAt: times.now } }
  }))
})

/** Go's time.Duration.String() of whole milliseconds, as the kubelet's event messages print it. */
export const goDuration = (millis: number): string => {
  if (millis < 1000) return `${millis}ms`
  const seconds = Math.floor(millis / 1000)
  const fraction = String(millis % 1000)
    .padStart(3, "0")
    .replace(/0+$/, "")
  const minutes = Math.floor(seconds / 60)
  const rest = `${seconds % 60}${fraction === "" ? "" : `.${fraction}`}s`
  return minutes === 0 ? rest : `${minutes}m${rest}`
}
