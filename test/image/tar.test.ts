import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tar, TarError, type TarEntry } from "../../build/tar.ts"

const entries: ReadonlyArray<TarEntry> = [
  { kind: "file", path: "/usr/local/bin/tool", mode: 0o755, content: Buffer.from("#!/bin/true\n") },
  { kind: "dir", path: "/usr", mode: 0o755 },
  { kind: "dir", path: "/usr/local", mode: 0o755 },
  { kind: "dir", path: "/usr/local/bin", mode: 0o755 },
  { kind: "dir", path: "/tmp", mode: 0o1777 },
  { kind: "dir", path: "/home", mode: 0o755 },
  { kind: "dir", path: "/home/nonroot", mode: 0o700, uid: 65532, gid: 65532 },
  { kind: "symlink", path: "/usr/local/bin/alias", target: "tool" },
  { kind: "dir", path: `/${"d".repeat(90)}`, mode: 0o755 },
  { kind: "file", path: `/${"d".repeat(90)}/${"f".repeat(60)}`, mode: 0o644, content: Buffer.alloc(1000, 7) }
]

/** GNU tar (nobody here wrote it) lists and unpacks what the writer made. */
describe("tar", () => {
  it("writes sorted entries that GNU tar lists with owners, modes and mtime 0", () => {
    const dir = mkdtempSync(join(tmpdir(), "preheat-tar-"))
    try {
      writeFileSync(join(dir, "layer.tar"), tar(entries))
      const listed = spawnSync("tar", ["--numeric-owner", "--utc", "-tvf", join(dir, "layer.tar")], { encoding: "utf8" })
      expect(listed.stderr).toBe("")
      const lines = listed.stdout.trim().split("\n")
      expect(lines.map((l) => l.split(/\s+/).slice(5).join(" "))).toEqual([
        `${"d".repeat(90)}/`,
        `${"d".repeat(90)}/${"f".repeat(60)}`,
        "home/",
        "home/nonroot/",
        "tmp/",
        "usr/",
        "usr/local/",
        "usr/local/bin/",
        "usr/local/bin/alias -> tool",
        "usr/local/bin/tool"
      ])
      expect(lines[3]).toMatch(/^drwx------ 65532\/65532 +0 1970-01-01 00:00 home\/nonroot\/$/)
      expect(lines[4]).toMatch(/^drwxrwxrwt 0\/0 /)

      const out = join(dir, "out")
      spawnSync("mkdir", [out])
      const unpacked = spawnSync("tar", ["-xf", join(dir, "layer.tar"), "-C", out], { encoding: "utf8" })
      expect(unpacked.stderr).toBe("")
      expect(readFileSync(join(out, "usr/local/bin/tool"), "utf8")).toBe("#!/bin/true\n")
      expect(statSync(join(out, "usr/local/bin/tool")).mode & 0o777).toBe(0o755)
      expect(readlinkSync(join(out, "usr/local/bin/alias"))).toBe("tool")
      expect(readFileSync(join(out, "d".repeat(90), "f".repeat(60)))).toEqual(Buffer.alloc(1000, 7))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("gives the same bytes whatever the order of the entries", () => {
    expect(tar([...entries].reverse()).equals(tar(entries))).toBe(true)
  })

  it("refuses a missing parent directory, duplicates and paths leaving the root", () => {
    expect(() => tar([{ kind: "file", path: "/etc/passwd", mode: 0o644, content: Buffer.alloc(0) }])).toThrow(TarError)
    expect(() =>
      tar([
        { kind: "dir", path: "/etc", mode: 0o755 },
        { kind: "dir", path: "etc/", mode: 0o755 }
      ])
    ).toThrow(/duplicate/)
    expect(() => tar([{ kind: "dir", path: "/../etc", mode: 0o755 }])).toThrow(/bad path/)
  })
})
