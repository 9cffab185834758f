import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  defaultMinFreeDisk,
  diskVerdict,
  formatBytes,
  type ImageFsRoom,
  insufficientDiskDetail,
  type MinFreeDisk,
  parseMinFreeDisk,
  thresholdBytes
} from "../../src/daemon/minFreeDisk.ts"

const Gi = 2 ** 30
const Mi = 2 ** 20

const parsed = (text: string): MinFreeDisk => {
  const result = parseMinFreeDisk(text)
  if (Result.isFailure(result)) throw new Error(result.failure)
  return result.success
}

const mountpoint = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"
const room = (freeBytes: number, totalBytes = 100 * Gi): ImageFsRoom => ({ mountpoint, totalBytes, freeBytes })

describe("--min-free-disk", () => {
  it.each([
    ["5Gi", 5 * Gi],
    ["500M", 500_000_000],
    ["1.5Ki", 1536],
    ["1000000000", 1_000_000_000],
    ["2T", 2e12],
    ["1Ei", 2 ** 60],
    ["0", 0],
    [" 10Mi ", 10 * Mi]
  ])("%s is %d bytes", (text, bytes) => {
    expect(parsed(text)).toEqual({ _tag: "Bytes", bytes, text: text.trim() })
  })

  it.each([
    ["10%", 10],
    ["0%", 0],
    ["100%", 100],
    ["2.5%", 2.5]
  ])("%s is a percentage", (text, percent) => {
    expect(parsed(text)).toEqual({ _tag: "Percent", percent, text })
  })

  it.each(["5GB", "5gi", "-1", "1e9", "ten", "", "10 %", "%", "5Mi%", "0x10"])("%j is refused, saying what is expected", (text) => {
    expect(parseMinFreeDisk(text)).toEqual(
      Result.fail("bytes as a Kubernetes quantity (such as 5Gi, 500M or 1000000000) or a percentage of the image filesystem (such as 10%)")
    )
  })

  it("a percentage over 100 is refused", () => {
    expect(parseMinFreeDisk("120%")).toEqual(Result.fail("a percentage of the image filesystem from 0% to 100%"))
  })

  it("defaults to 10%", () => {
    expect(defaultMinFreeDisk).toEqual(parsed("10%"))
  })
})

describe("the room a pull needs", () => {
  it("a percentage is of the filesystem's size, rounded up; bytes are bytes", () => {
    expect(thresholdBytes(parsed("10%"), 100 * Gi)).toBe(10 * Gi)
    expect(thresholdBytes(parsed("10%"), 1001)).toBe(101)
    expect(thresholdBytes(parsed("5Gi"), 100 * Gi)).toBe(5 * Gi)
  })

  it("less free than the threshold is InsufficientDisk with the figures; exactly the threshold is enough", () => {
    expect(diskVerdict(parsed("10%"), room(10 * Gi))).toBeUndefined()
    const short = diskVerdict(parsed("10%"), room(10 * Gi - 1))
    expect(short).toMatchObject({ _tag: "InsufficientDisk", thresholdBytes: 10 * Gi, room: room(10 * Gi - 1) })
    expect(diskVerdict(parsed("5Gi"), room(5 * Gi - 1))?._tag).toBe("InsufficientDisk")
    expect(diskVerdict(parsed("5Gi"), room(5 * Gi))).toBeUndefined()
  })

  it("0 and 0% never refuse, even on a full disk", () => {
    expect(diskVerdict(parsed("0"), room(0))).toBeUndefined()
    expect(diskVerdict(parsed("0%"), room(0))).toBeUndefined()
  })

  it("the message gives free, total and threshold; a percentage also as bytes", () => {
    const percent = diskVerdict(parsed("10%"), room(3.25 * Gi))
    expect(percent && insufficientDiskDetail(percent)).toBe(
      `insufficient disk: 3.2Gi free of 100Gi on the image filesystem ${mountpoint}, below --min-free-disk 10% (10Gi)`
    )
    const bytes = diskVerdict(parsed("500M"), room(300 * Mi, 1 * Gi))
    expect(bytes && insufficientDiskDetail(bytes)).toBe(
      `insufficient disk: 300Mi free of 1Gi on the image filesystem ${mountpoint}, below --min-free-disk 500M`
    )
  })

  it("a mountpoint with control characters is escaped in the message", () => {
    const short = diskVerdict(parsed("1Gi"), { mountpoint: "/var/lib/\u001b[31mx", totalBytes: Gi, freeBytes: 0 })
    expect(short && insufficientDiskDetail(short)).not.toContain("\u001b")
  })

  it.each([
    [0, "0B"],
    [512, "512B"],
    [1024, "1Ki"],
    [1536, "1.5Ki"],
    [10 * Gi - 1, "9.9Gi"],
    [100 * Gi, "100Gi"],
    [3 * 2 ** 40, "3Ti"]
  ])("formats %d bytes as %s (rounded down)", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text)
  })
})
