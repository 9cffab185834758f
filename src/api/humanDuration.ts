/**
 * A duration in kubectl's words (the AGE column), as apimachinery's duration.HumanDuration: precise
 * while it is short, coarser as it grows ("45s", "3m12s", "14m", "5h4m", "20h", "3d2h", "40d", "2y31d").
 */
export const humanDuration = (millis: number): string => {
  const seconds = Math.trunc(millis / 1000)
  // Up to 2 s in the future is clock skew between machines: "now".
  if (seconds < -1) return "<invalid>"
  if (seconds < 0) return "0s"
  if (seconds < 60 * 2) return `${seconds}s`
  const minutes = Math.trunc(seconds / 60)
  if (minutes < 10) {
    const s = seconds % 60
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`
  }
  if (minutes < 60 * 3) return `${minutes}m`
  const hours = Math.trunc(minutes / 60)
  if (hours < 8) {
    const m = minutes % 60
    return m === 0 ? `${hours}h` : `${hours}h${m}m`
  }
  if (hours < 48) return `${hours}h`
  if (hours < 24 * 8) {
    const h = hours % 24
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365
    const years = Math.trunc(hours / 24 / 365)
    return days === 0 ? `${years}y` : `${years}y${days}d`
  }
  return `${Math.trunc(hours / 24 / 365)}y`
}
