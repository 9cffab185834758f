import { Data, Result } from "effect"
import { escapeForeignText } from "../api/goQuote.ts"

/**
 * `--min-free-disk`: the room a pull must find on the runtime's image filesystem before it starts,
 * in bytes (a Kubernetes quantity: 5Gi, 500M, 1000000) or as a share of the filesystem (10%).
 * `text` is what the user wrote, for messages.
 */
export type MinFreeDisk =
  | { readonly _tag: "Bytes"; readonly bytes: number; readonly text: string }
  | { readonly _tag: "Percent"; readonly percent: number; readonly text: string }

/**
 * 10%: the kubelet's image GC starts at 85% used (imageGCHighThresholdPercent) and its hard
 * eviction at 15% (imagefs.available) or 10% (nodefs.available) free; a pre-pull that leaves less
 * than 10% only hands the node to GC and eviction.
 */
export const defaultMinFreeDisk: MinFreeDisk = { _tag: "Percent", percent: 10, text: "10%" }

const suffixes: Readonly<Record<string, number>> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60
}

const quantity = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/
const percentage = /^(\d+(?:\.\d+)?)%$/

/** Bytes written as a Kubernetes quantity (5Gi, 500M, 1000000); undefined when it is not one. */
export const parseBytes = (input: string): number | undefined => {
  const bytes = quantity.exec(input.trim())
  return bytes === null ? undefined : Math.ceil(Number(bytes[1]) * (suffixes[bytes[2] ?? ""] ?? 1))
}

/**
 * The flag's value, or what was expected instead (the CLI prints it after `Invalid value for flag
 * --min-free-disk: "5GB". Expected:`).
 */
export const parseMinFreeDisk = (input: string): Result.Result<MinFreeDisk, string> => {
  const text = input.trim()
  const percent = percentage.exec(text)
  if (percent !== null) {
    const value = Number(percent[1])
    return value <= 100
      ? Result.succeed({ _tag: "Percent", percent: value, text })
      : Result.fail("a percentage of the image filesystem from 0% to 100%")
  }
  const bytes = parseBytes(text)
  if (bytes !== undefined) return Result.succeed({ _tag: "Bytes", bytes, text })
  return Result.fail(
    "bytes as a Kubernetes quantity (such as 5Gi, 500M or 1000000000) or a percentage of the image filesystem (such as 10%)"
  )
}

/** What the runtime's image filesystem holds and has left: CRI's mountpoint, statfs's figures. */
export interface ImageFsRoom {
  readonly mountpoint: string
  readonly totalBytes: number
  readonly freeBytes: number
}

/** The free bytes `min` asks for on a filesystem of `totalBytes`. */
export const thresholdBytes = (min: MinFreeDisk, totalBytes: number): number =>
  min._tag === "Bytes" ? min.bytes : Math.ceil((totalBytes * min.percent) / 100)

/** A pull not started: the image filesystem has less free room than `--min-free-disk`. */
export class InsufficientDisk extends Data.TaggedError("InsufficientDisk")<{
  readonly room: ImageFsRoom
  readonly min: MinFreeDisk
  readonly thresholdBytes: number
}> {}

/** The pull may go on (undefined), or the room is short of `min`. */
export const diskVerdict = (min: MinFreeDisk, room: ImageFsRoom): InsufficientDisk | undefined => {
  const threshold = thresholdBytes(min, room.totalBytes)
  return room.freeBytes < threshold ? new InsufficientDisk({ room, min, thresholdBytes: threshold }) : undefined
}

const units = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

/**
 * Bytes in binary units with one decimal, rounded down (so a free figure never reads as more than
 * it is, next to a threshold): 1536 -> "1.5Ki", 10 GiB -> "10Gi", 512 -> "512B".
 */
export const formatBytes = (bytes: number): string => {
  let value = bytes
  let unit = ""
  for (const next of units) {
    if (value < 1024) break
    value /= 1024
    unit = next
  }
  if (unit === "") return `${Math.floor(bytes)}B`
  return `${Math.floor(value * 10) / 10}${unit}`
}

/** The threshold as the user set it, with what it comes to when it is a percentage. */
const describeMin = (min: MinFreeDisk, threshold: number): string =>
  min._tag === "Percent" ? `${min.text} (${formatBytes(threshold)})` : min.text

/** The failure as a tag's status and the Event say it: the figures, free, total and threshold. */
export const insufficientDiskDetail = (error: InsufficientDisk): string => {
  const { room, min, thresholdBytes: threshold } = error
  return (
    `insufficient disk: ${formatBytes(room.freeBytes)} free of ${formatBytes(room.totalBytes)} on the image filesystem ` +
    `${escapeForeignText(room.mountpoint)}, below --min-free-disk ${describeMin(min, threshold)}`
  )
}
