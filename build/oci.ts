/**
 * An OCI image layout (image-spec v1.1) written without any container engine: content-addressed
 * blobs under blobs/sha256/, an image index per platform set, and index.json naming it. Pure
 * JSON and bytes in, files out; same inputs give byte-identical output, so the same digests.
 */
import { createHash } from "node:crypto"
import { mkdir, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { tar, type TarEntry } from "./tar.ts"

export const mediaTypes = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip"
} as const

export interface Blob {
  readonly mediaType: string
  readonly digest: string
  readonly size: number
  readonly bytes: Buffer
}

export interface Platform {
  readonly architecture: "amd64" | "arm64"
  readonly os: "linux"
  readonly variant?: string
}

/** What the image runs: the config's `config` object (image-spec "config" field names). */
export interface RunConfig {
  readonly User: string
  readonly Entrypoint: ReadonlyArray<string>
  readonly Cmd: ReadonlyArray<string>
  readonly Env: ReadonlyArray<string>
  readonly WorkingDir: string
  readonly ExposedPorts: Readonly<Record<string, Record<string, never>>>
  readonly Labels: Readonly<Record<string, string>>
}

export interface PlatformImage {
  readonly platform: Platform
  readonly manifest: Blob
  readonly config: Blob
  readonly layer: Blob
  /** sha256 of the uncompressed layer tar (the config's rootfs.diff_ids). */
  readonly diffId: string
  readonly uncompressedSize: number
}

export interface ImageIndex {
  readonly index: Blob
  readonly images: ReadonlyArray<PlatformImage>
}

export const sha256 = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

const blob = (mediaType: string, bytes: Buffer): Blob => ({ mediaType, digest: sha256(bytes), size: bytes.length, bytes })

/** Canonical enough: JSON.stringify keeps insertion order, which the builders below fix. */
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))

const descriptor = (b: Blob, extra: Record<string, unknown> = {}) => ({ mediaType: b.mediaType, digest: b.digest, size: b.size, ...extra })

/**
 * One platform's image: a single gzip layer (zlib's gzip header carries no name and mtime 0, as
 * `gzip -n`), a config with no creation time, and the manifest.
 */
export const platformImage = (
  platform: Platform,
  entries: ReadonlyArray<TarEntry>,
  run: RunConfig,
  annotations: Readonly<Record<string, string>>
): PlatformImage => {
  const layerTar = tar(entries)
  const diffId = sha256(layerTar)
  const layer = blob(mediaTypes.layer, gzipSync(layerTar, { level: 9 }))
  const config = blob(
    mediaTypes.config,
    json({
      architecture: platform.architecture,
      os: platform.os,
      ...(platform.variant === undefined ? {} : { variant: platform.variant }),
      config: run,
      rootfs: { type: "layers", diff_ids: [diffId] },
      history: [{ created_by: "preheat build/image.ts" }]
    })
  )
  const manifest = blob(
    mediaTypes.manifest,
    json({
      schemaVersion: 2,
      mediaType: mediaTypes.manifest,
      config: descriptor(config),
      layers: [descriptor(layer)],
      annotations
    })
  )
  return { platform, manifest, config, layer, diffId, uncompressedSize: layerTar.length }
}

/** The multi-platform index over `images`, in the order given. */
export const imageIndex = (images: ReadonlyArray<PlatformImage>, annotations: Readonly<Record<string, string>>): ImageIndex => ({
  images,
  index: blob(
    mediaTypes.index,
    json({
      schemaVersion: 2,
      mediaType: mediaTypes.index,
      manifests: images.map((image) => descriptor(image.manifest, { platform: image.platform })),
      annotations
    })
  )
})

/**
 * Writes the layout to `dir` (replacing what was there): oci-layout, index.json pointing at the
 * image index under the tag `refName` (skopeo's `oci:DIR:REF`), and every blob.
 */
export const writeLayout = async (dir: string, image: ImageIndex, refName: string): Promise<void> => {
  await rm(dir, { recursive: true, force: true })
  const blobs = join(dir, "blobs", "sha256")
  await mkdir(blobs, { recursive: true })
  const all = [image.index, ...image.images.flatMap((i) => [i.manifest, i.config, i.layer])]
  for (const b of all) await writeFile(join(blobs, b.digest.slice("sha256:".length)), b.bytes)
  await writeFile(join(dir, "oci-layout"), json({ imageLayoutVersion: "1.0.0" }))
  await writeFile(
    join(dir, "index.json"),
    json({
      schemaVersion: 2,
      mediaType: mediaTypes.index,
      manifests: [descriptor(image.index, { annotations: { "org.opencontainers.image.ref.name": refName } })]
    })
  )
}
