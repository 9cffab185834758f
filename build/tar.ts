/**
 * A reproducible tar (POSIX ustar) writer for image layers: the bytes depend only on the entries,
 * never on the host's tar, clock, umask or user database. Entries are sorted by path (a parent
 * directory sorts before its children), every mtime is 0 and owners are numeric only.
 */

export type TarEntry =
  | { readonly kind: "dir"; readonly path: string; readonly mode: number; readonly uid?: number; readonly gid?: number }
  | {
      readonly kind: "file"
      readonly path: string
      readonly mode: number
      readonly content: Uint8Array
      readonly uid?: number
      readonly gid?: number
    }
  | { readonly kind: "symlink"; readonly path: string; readonly target: string }

export class TarError extends Error {}

const block = 512

const octal = (value: number, width: number): string => `${value.toString(8).padStart(width - 1, "0")}\0`

/** ustar splits a path of up to 255 bytes into a prefix (155) and a name (100) at a slash. */
const splitPath = (path: string): { readonly name: string; readonly prefix: string } => {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: "" }
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i)
    const name = path.slice(i + 1)
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== "") return { name, prefix }
  }
  throw new TarError(`path too long for ustar: ${path}`)
}

const header = (entry: TarEntry, size: number): Buffer => {
  const out = Buffer.alloc(block)
  const path = entry.kind === "dir" ? `${entry.path}/` : entry.path
  const { name, prefix } = splitPath(path)
  out.write(name, 0, 100, "utf8")
  out.write(octal(entry.kind === "symlink" ? 0o777 : entry.mode, 8), 100)
  out.write(octal(entry.kind === "symlink" ? 0 : (entry.uid ?? 0), 8), 108)
  out.write(octal(entry.kind === "symlink" ? 0 : (entry.gid ?? 0), 8), 116)
  out.write(octal(size, 12), 124)
  out.write(octal(0, 12), 136)
  out.write("        ", 148)
  out.write(entry.kind === "dir" ? "5" : entry.kind === "symlink" ? "2" : "0", 156)
  if (entry.kind === "symlink") {
    if (Buffer.byteLength(entry.target) > 100) throw new TarError(`symlink target too long: ${entry.target}`)
    out.write(entry.target, 157, 100, "utf8")
  }
  out.write("ustar\0", 257)
  out.write("00", 263)
  out.write(prefix, 345, 155, "utf8")
  let sum = 0
  for (const byte of out) sum += byte
  out.write(`${octal(sum, 7)} `, 148)
  return out
}

const normalise = (path: string): string => {
  const trimmed = path.replace(/^\/+/, "").replace(/\/+$/, "")
  if (trimmed === "" || trimmed.split("/").some((part) => part === "" || part === "." || part === "..")) {
    throw new TarError(`bad path in tar: ${JSON.stringify(path)}`)
  }
  return trimmed
}

/** The tar of `entries` (paths relative to the root, with or without a leading slash). */
export const tar = (entries: ReadonlyArray<TarEntry>): Buffer => {
  const sorted = entries
    .map((entry) => ({ ...entry, path: normalise(entry.path) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const seen = new Set<string>()
  const parts: Array<Buffer> = []
  for (const entry of sorted) {
    if (seen.has(entry.path)) throw new TarError(`duplicate path in tar: ${entry.path}`)
    seen.add(entry.path)
    const parent = entry.path.includes("/") ? entry.path.slice(0, entry.path.lastIndexOf("/")) : undefined
    if (parent !== undefined && !seen.has(parent)) throw new TarError(`no directory entry for ${parent} (parent of ${entry.path})`)
    const content = entry.kind === "file" ? entry.content : undefined
    parts.push(header(entry, content?.length ?? 0))
    if (content !== undefined) {
      parts.push(Buffer.from(content.buffer, content.byteOffset, content.length))
      parts.push(Buffer.alloc((block - (content.length % block)) % block))
    }
  }
  parts.push(Buffer.alloc(2 * block))
  return Buffer.concat(parts)
}
