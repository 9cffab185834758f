// The workload annotations of upstream's image pre-download (apis/apps/v1alpha1, the
// ImagePreDownload* keys), read from a Deployment, StatefulSet or DaemonSet.

export const parallelismKey = "apps.kruise.io/image-predownload-parallelism"
const minUpdatedReadyPodsKey = "apps.kruise.io/image-predownload-min-updated-ready-pods"
const timeoutSecondsKey = "apps.kruise.io/image-predownload-timeout-seconds"

/** Upstream's pull timeout when the timeout annotation is absent (CreateJobForWorkload). */
const defaultPullTimeoutSeconds = 300

export interface PreDownloadSettings {
  readonly parallelism: number
  /** An absolute count or a percentage of the workload's replicas, rounded up (upstream's intstr rule). */
  readonly minUpdatedReadyPods: number | `${number}%`
  readonly timeoutSeconds: number
}

export type ParsedSettings =
  | { readonly _tag: "Off" }
  | { readonly _tag: "Invalid"; readonly message: string }
  | { readonly _tag: "On"; readonly settings: PreDownloadSettings }

const positiveInt = /^[1-9][0-9]{0,8}$/
const count = /^(0|[1-9][0-9]{0,8})$/
const percent = /^(0|[1-9][0-9]{0,8})%$/

/**
 * Pre-download is on while the parallelism annotation is there (the opt-in of this controller;
 * upstream enables it for every CloneSet and defaults parallelism to 1). Upstream silently falls
 * back to its defaults on values it cannot parse; here such a value is reported and nothing is
 * pulled, so a typo does not become a pull at parallelism 1 on every node.
 */
export const parseSettings = (annotations: Readonly<Record<string, string>> | undefined): ParsedSettings => {
  const parallelism = annotations?.[parallelismKey]
  if (parallelism === undefined) return { _tag: "Off" }
  const errors: Array<string> = []
  if (!positiveInt.test(parallelism)) errors.push(`${parallelismKey}: ${JSON.stringify(parallelism)} is not a positive integer`)
  const min = annotations?.[minUpdatedReadyPodsKey] ?? "0"
  if (!count.test(min) && !percent.test(min)) {
    errors.push(`${minUpdatedReadyPodsKey}: ${JSON.stringify(min)} is neither a count nor a percentage`)
  }
  const timeout = annotations?.[timeoutSecondsKey] ?? String(defaultPullTimeoutSeconds)
  if (!positiveInt.test(timeout)) errors.push(`${timeoutSecondsKey}: ${JSON.stringify(timeout)} is not a positive integer`)
  if (errors.length > 0) return { _tag: "Invalid", message: errors.join("; ") }
  return {
    _tag: "On",
    settings: {
      parallelism: Number(parallelism),
      minUpdatedReadyPods: percent.test(min) ? (min as `${number}%`) : Number(min),
      timeoutSeconds: Number(timeout)
    }
  }
}

/** An int-or-percent of `total`, as apimachinery's GetScaledValueFromIntOrPercent scales it. */
export const scaled = (value: number | string, total: number, roundUp: boolean): number => {
  if (typeof value === "number") return value
  const match = /^([0-9]+)%$/.exec(value)
  if (match === null) return Number(value)
  const exact = (Number(match[1]) * total) / 100
  return roundUp ? Math.ceil(exact) : Math.floor(exact)
}
