import { readFileSync } from "node:fs"

/** Clock ticks per second of /proc/PID/stat's times (USER_HZ, 100 on Linux). */
const ticksPerSecond = 100

/** User plus system CPU of another process so far, in seconds (10 ms resolution). */
export const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // Fields 14 and 15 of proc(5); the slice above starts at field 3.
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond
}

/** A size field of /proc/PID/status (VmRSS, VmHWM...), in bytes. */
export const statusBytes = (pid: number, field: string): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024
}
