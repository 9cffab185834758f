import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { describe, expect, it } from "vitest"
import { libraryClosure, parseReadelf, RootfsError, type ElfInfo, type LibraryLayout } from "../../build/rootfs.ts"

const amd64: LibraryLayout = {
  imageDir: "/lib/x86_64-linux-gnu",
  hostDirs: ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"],
  machine: "Advanced Micro Devices X86-64"
}

describe("the executable's libraries", () => {
  it.runIf(process.arch === "x64")("are what ldd lists for the Node binary, found without running it", () => {
    const ldd = spawnSync("ldd", [process.execPath], { encoding: "utf8" })
    expect(ldd.status).toBe(0)
    const fromLdd = ldd.stdout
      .split("\n")
      .map((l) => l.trim().split(/\s+/)[0]!)
      .filter((n) => n !== "" && !n.startsWith("linux-vdso"))
    const closure = libraryClosure(process.execPath, amd64)
    expect(closure.map((l) => basename(l.imagePath)).sort()).toEqual(fromLdd.map((n) => basename(n)).sort())
    expect(closure.map((l) => l.imagePath)).toContain("/lib64/ld-linux-x86-64.so.2")
  })

  it("follows NEEDED entries transitively, once each, and refuses another architecture's binary", () => {
    const host = mkdtempSync(join(tmpdir(), "preheat-libs-"))
    try {
      for (const name of ["liba.so", "libb.so", "libc.so.6", "ld-linux-aarch64.so.1", "exe"]) writeFileSync(join(host, name), name)
      const elf: Record<string, ElfInfo> = {
        exe: { machine: "AArch64", interpreter: "/lib/ld-linux-aarch64.so.1", needed: ["liba.so", "libc.so.6"] },
        "liba.so": { machine: "AArch64", interpreter: undefined, needed: ["libb.so", "libc.so.6"] },
        "libb.so": { machine: "AArch64", interpreter: undefined, needed: ["ld-linux-aarch64.so.1"] },
        "libc.so.6": { machine: "AArch64", interpreter: undefined, needed: ["ld-linux-aarch64.so.1"] }
      }
      const inspect = (path: string) => elf[basename(path)]!
      const layout: LibraryLayout = { imageDir: "/lib/aarch64-linux-gnu", hostDirs: [join(host, "none"), host], machine: "AArch64" }
      expect(libraryClosure(join(host, "exe"), layout, inspect)).toEqual([
        { imagePath: "/lib/aarch64-linux-gnu/liba.so", hostPath: join(host, "liba.so") },
        { imagePath: "/lib/aarch64-linux-gnu/libb.so", hostPath: join(host, "libb.so") },
        { imagePath: "/lib/aarch64-linux-gnu/libc.so.6", hostPath: join(host, "libc.so.6") },
        { imagePath: "/lib/ld-linux-aarch64.so.1", hostPath: join(host, "ld-linux-aarch64.so.1") }
      ])
      expect(() => libraryClosure(join(host, "exe"), { ...layout, machine: "X86-64" }, inspect)).toThrow(/is for AArch64/)
      elf["libb.so"] = { machine: "AArch64", interpreter: undefined, needed: ["libmissing.so"] }
      expect(() => libraryClosure(join(host, "exe"), layout, inspect)).toThrow(RootfsError)
    } finally {
      rmSync(host, { recursive: true, force: true })
    }
  })

  it("parses readelf's program interpreter, machine and NEEDED entries", () => {
    const info = parseReadelf(
      [
        "  Machine:                           AArch64",
        "      [Requesting program interpreter: /lib/ld-linux-aarch64.so.1]",
        " 0x0000000000000001 (NEEDED)             Shared library: [libstdc++.so.6]",
        " 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]"
      ].join("\n")
    )
    expect(info).toEqual({ machine: "AArch64", interpreter: "/lib/ld-linux-aarch64.so.1", needed: ["libstdc++.so.6", "libc.so.6"] })
  })
})
