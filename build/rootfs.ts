/**
 * The root file system of the preheat image: the single executable, exactly the shared libraries
 * it loads (its ELF NEEDED entries and theirs, found as the dynamic loader would, plus the
 * loader itself), CA certificates, and the users: root for the daemon (the CRI socket is
 * root-owned) and nonroot 65532 for the controller. No shell, no package manager.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, realpathSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import type { TarEntry } from "./tar.ts"

export class RootfsError extends Error {}

export const executablePath = "/usr/local/bin/preheat"
export const nonrootUid = 65532
export const caBundlePath = "/etc/ssl/certs/ca-certificates.crt"

/** Where a platform's libraries sit in the image (Debian multiarch) and on this host. */
export interface LibraryLayout {
  /** The multiarch directory in the image, e.g. /lib/x86_64-linux-gnu. */
  readonly imageDir: string
  /** Host directories holding that architecture's libraries, searched in order. */
  readonly hostDirs: ReadonlyArray<string>
  /** The ELF machine readelf reports for the architecture (a wrong binary is refused). */
  readonly machine: string
}

export interface ElfInfo {
  readonly machine: string
  readonly interpreter: string | undefined
  readonly needed: ReadonlyArray<string>
}

/** Parses `readelf -h -l -d` output (GNU readelf reads every ELF architecture, so this works cross). */
export const parseReadelf = (text: string): ElfInfo => ({
  machine: /^\s*Machine:\s+(.+?)\s*$/m.exec(text)?.[1] ?? "unknown",
  interpreter: /\[Requesting program interpreter: ([^\]]+)\]/.exec(text)?.[1],
  needed: [...text.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]!)
})

export const readelf = (path: string): ElfInfo => {
  const result = spawnSync("readelf", ["-h", "-l", "-d", "-W", path], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 })
  if (result.error) throw new RootfsError(`cannot run readelf (apt-get install binutils): ${result.error.message}`)
  if (result.status !== 0) throw new RootfsError(`readelf ${path}: ${result.stderr.trim()}`)
  return parseReadelf(result.stdout)
}

export interface ResolvedLibrary {
  /** Absolute path in the image. */
  readonly imagePath: string
  /** The file on this host (symlinks resolved). */
  readonly hostPath: string
}

/**
 * The executable's run-time closure: the loader at its PT_INTERP path and every NEEDED library,
 * transitively, under the multiarch directory. What `ldd` lists, but without running the binary,
 * so it works for an arm64 executable on an amd64 host.
 */
export const libraryClosure = (executable: string, layout: LibraryLayout, inspect = readelf): ReadonlyArray<ResolvedLibrary> => {
  const top = inspect(executable)
  if (top.machine !== layout.machine) {
    throw new RootfsError(`${executable} is for ${top.machine}, expected ${layout.machine}`)
  }
  if (top.interpreter === undefined) throw new RootfsError(`${executable} names no program interpreter (static?)`)
  const find = (name: string): string => {
    for (const dir of layout.hostDirs) {
      const candidate = join(dir, name)
      if (existsSync(candidate)) return realpathSync(candidate)
    }
    throw new RootfsError(`${name} (needed by ${basename(executable)}) is in none of ${layout.hostDirs.join(", ")}`)
  }
  const interpreterName = basename(top.interpreter)
  const out = new Map<string, ResolvedLibrary>()
  out.set(top.interpreter, { imagePath: top.interpreter, hostPath: find(interpreterName) })
  const queue = [...top.needed]
  while (queue.length > 0) {
    const name = queue.shift()!
    const imagePath = join(layout.imageDir, name)
    // The loader is already mapped at its PT_INTERP path; its soname is satisfied by it.
    if (name === interpreterName || out.has(imagePath)) continue
    const hostPath = find(name)
    out.set(imagePath, { imagePath, hostPath })
    queue.push(...inspect(hostPath).needed)
  }
  return [...out.values()].sort((a, b) => (a.imagePath < b.imagePath ? -1 : 1))
}

const text = (value: string): Uint8Array => Buffer.from(value)

/** Directory entries for every ancestor of `paths` not already listed. */
const parents = (paths: ReadonlyArray<string>, listed: ReadonlySet<string>): Array<TarEntry> => {
  const dirs = new Set<string>()
  for (const path of paths) {
    for (let dir = dirname(path); dir !== "/" && !listed.has(dir); dir = dirname(dir)) dirs.add(dir)
  }
  return [...dirs].map((path) => ({ kind: "dir", path, mode: 0o755 }))
}

/** Every entry of the image's single layer. */
export const rootfsEntries = (
  executable: string,
  layout: LibraryLayout,
  caBundle: string,
  inspect = readelf,
  /** More files (bench/image.ts: a bundle beside a plain Node binary). */
  extra: ReadonlyArray<TarEntry> = []
): ReadonlyArray<TarEntry> => {
  const libraries = libraryClosure(executable, layout, inspect)
  const explicit: Array<TarEntry> = [
    { kind: "dir", path: "/tmp", mode: 0o1777 },
    { kind: "dir", path: "/root", mode: 0o700 },
    { kind: "dir", path: "/home/nonroot", mode: 0o700, uid: nonrootUid, gid: nonrootUid },
    {
      kind: "file",
      path: "/etc/passwd",
      mode: 0o644,
      content: text(`root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${nonrootUid}:${nonrootUid}:nonroot:/home/nonroot:/sbin/nologin\n`)
    },
    { kind: "file", path: "/etc/group", mode: 0o644, content: text(`root:x:0:\nnonroot:x:${nonrootUid}:\n`) },
    { kind: "file", path: "/etc/nsswitch.conf", mode: 0o644, content: text("passwd: files\ngroup: files\nhosts: files dns\n") },
    { kind: "file", path: caBundlePath, mode: 0o644, content: readFileSync(caBundle) },
    { kind: "file", path: executablePath, mode: 0o755, content: readFileSync(executable) },
    ...libraries.map((lib): TarEntry => ({ kind: "file", path: lib.imagePath, mode: 0o755, content: readFileSync(lib.hostPath) })),
    ...extra
  ]
  const listed = new Set(explicit.filter((e) => e.kind === "dir").map((e) => e.path))
  return [
    ...parents(
      explicit.map((e) => e.path),
      listed
    ),
    ...explicit
  ]
}
