import { createHash } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { imageIndex, mediaTypes, platformImage, writeLayout, type RunConfig } from "../../build/oci.ts"
import type { TarEntry } from "../../build/tar.ts"

const run: RunConfig = {
  User: "65532:65532",
  Entrypoint: ["/usr/local/bin/preheat"],
  Cmd: ["--help"],
  Env: ["PATH=/usr/local/bin"],
  WorkingDir: "/",
  ExposedPorts: { "8080/tcp": {} },
  Labels: {}
}
const files = (arch: string): ReadonlyArray<TarEntry> => [
  { kind: "dir", path: "/usr", mode: 0o755 },
  { kind: "file", path: "/usr/preheat", mode: 0o755, content: Buffer.from(`binary for ${arch}\n`.repeat(100)) }
]
const build = () =>
  imageIndex(
    [
      platformImage({ architecture: "amd64", os: "linux" }, files("amd64"), run, { a: "1" }),
      platformImage({ architecture: "arm64", os: "linux", variant: "v8" }, files("arm64"), run, { a: "1" })
    ],
    { a: "1" }
  )

const sha = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

describe("OCI image layout", () => {
  it("is reproducible: same inputs, same index digest", () => {
    expect(build().index.digest).toBe(build().index.digest)
    const other = imageIndex([platformImage({ architecture: "amd64", os: "linux" }, files("x"), run, {})], {})
    expect(other.index.digest).not.toBe(build().index.digest)
  })

  it("writes content-addressed blobs, an index per platform and index.json naming it by tag", async () => {
    const dir = mkdtempSync(join(tmpdir(), "preheat-oci-"))
    try {
      const image = build()
      await writeLayout(dir, image, "0.1.0")
      expect(JSON.parse(readFileSync(join(dir, "oci-layout"), "utf8"))).toEqual({ imageLayoutVersion: "1.0.0" })
      const blobs = join(dir, "blobs", "sha256")
      for (const name of readdirSync(blobs)) expect(sha(readFileSync(join(blobs, name)))).toBe(`sha256:${name}`)
      const read = (digest: string) => readFileSync(join(blobs, digest.slice(7)))
      const top = JSON.parse(readFileSync(join(dir, "index.json"), "utf8"))
      expect(top.manifests).toEqual([
        {
          mediaType: mediaTypes.index,
          digest: image.index.digest,
          size: image.index.size,
          annotations: { "org.opencontainers.image.ref.name": "0.1.0" }
        }
      ])
      const index = JSON.parse(read(top.manifests[0].digest).toString())
      expect(index.manifests.map((m: any) => m.platform)).toEqual([
        { architecture: "amd64", os: "linux" },
        { architecture: "arm64", os: "linux", variant: "v8" }
      ])
      const manifest = JSON.parse(read(index.manifests[1].digest).toString())
      const config = JSON.parse(read(manifest.config.digest).toString())
      expect(config).toMatchObject({ architecture: "arm64", os: "linux", variant: "v8", config: run })
      expect(config.created).toBeUndefined()
      const layer = read(manifest.layers[0].digest)
      expect(manifest.layers[0]).toMatchObject({ mediaType: mediaTypes.layer, size: layer.length })
      // gzip -n: no name, mtime 0 in the header; the config names the uncompressed tar's digest.
      expect(layer.readUInt32LE(4)).toBe(0)
      expect(layer[3]! & 0x08).toBe(0)
      expect(config.rootfs).toEqual({ type: "layers", diff_ids: [sha(gunzipSync(layer))] })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
