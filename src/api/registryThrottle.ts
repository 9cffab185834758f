/**
 * How a throttling registry shows in a NodeImage (issue 28, part 3). Upstream's tag status has no
 * reason field, so the reason leads the message while the daemon waits out a registry's rate limit
 * (phase Pulling): the daemon writes it, the controller reads it to lower that registry's
 * concurrent pulls, and `kubectl get nodeimage -o yaml` shows it as is. Events and the pull metric
 * carry the same reason.
 */
export const registryThrottledReason = "RegistryThrottled"

const prefix = `${registryThrottledReason}: `

/** A status message saying the registry throttled the last attempt. */
export const throttledMessage = (detail: string): string => `${prefix}${detail}`

/** Whether a tag's status is a throttled attempt waiting for its retry (a final status never is). */
export const isThrottledReport = (status: { readonly phase: string; readonly message?: string } | undefined): boolean =>
  status !== undefined && status.phase !== "Succeeded" && status.phase !== "Failed" && status.message?.startsWith(prefix) === true
