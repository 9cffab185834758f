import { createCipheriv, createHash } from "node:crypto"
import { gzipSync } from "node:zlib"

/**
 * Test images made without any network: deterministic layer tars (same seed, same bytes, same
 * digests), an OCI config whose rootfs.diff_ids are the tars' sha256, pushed to a registry over
 * the distribution HTTP API. Big layers are pseudo-random (AES-CTR keystream of the seed), so they
 * do not compress and a pull really moves that many bytes.
 */

export interface LayerSpec {
  /** Bytes of file content in the layer (the tar and gzip add a little). */
  readonly size: number
  /** Varies the content: a different seed gives a different layer. */
  readonly seed: string
  /** The file is zeros after a seeded first block: a small blob that unpacks to `size` bytes. */
  readonly zeros?: boolean
}

export interface Blob {
  readonly mediaType: string
  readonly digest: string
  readonly size: number
  readonly bytes: Buffer
}

export interface ImageContent {
  readonly config: Blob
  readonly layers: ReadonlyArray<Blob>
  readonly manifest: Blob
}

export interface Registry {
  /** host:port, as in an image reference. */
  readonly host: string
  readonly auth?: { readonly username: string; readonly password: string }
}

export interface PushedImage {
  readonly repository: string
  readonly tags: ReadonlyArray<string>
  /** The manifest digest: `name@<digest>` pulls exactly this image. */
  readonly digest: string
  /** The config digest: the image id CRI reports. */
  readonly imageId: string
  /** Config plus layers as stored: the bytes a pull downloads besides the manifest. */
  readonly blobBytes: number
  /** `host/repository:tag` (the first tag unless one is named). */
  readonly reference: (tag?: string) => string
  /** `host/repository@sha256:...` */
  readonly digestReference: string
}

const sha256 = (bytes: Buffer): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

/** A stream of pseudo-random bytes fixed by the seed: incompressible, and fast (about 1 GB/s). */
const seededBytes = (seed: string, size: number): Buffer => {
  const key = createHash("sha256").update(`key:${seed}`).digest().subarray(0, 16)
  const cipher = createCipheriv("aes-128-ctr", key, Buffer.alloc(16))
  const out = Buffer.allocUnsafe(size)
  const zeros = Buffer.alloc(1 << 20)
  for (let offset = 0; offset < size; offset += zeros.length) {
    cipher.update(zeros).copy(out, offset, 0, Math.min(zeros.length, size - offset))
  }
  return out
}

const octal = (value: number, width: number): string => `${value.toString(8).padStart(width - 1, "0")}\0`

/** One ustar header, written by hand so the bytes never depend on the host's tar. */
const tarHeader = (name: string, size: number): Buffer => {
  const header = Buffer.alloc(512)
  header.write(name, 0, 100, "utf8")
  header.write(octal(0o644, 8), 100)
  header.write(octal(0, 8), 108)
  header.write(octal(0, 8), 116)
  header.write(octal(size, 12), 124)
  header.write(octal(0, 12), 136)
  header.write("        ", 148)
  header.write("0", 156)
  header.write("ustar\0", 257)
  header.write("00", 263)
  let sum = 0
  for (const byte of header) sum += byte
  header.write(`${octal(sum, 7)} `, 148)
  return header
}

/** A tar with one regular file, `layer-<seed>.bin`, mtime 0, owner 0. */
const layerTar = (layer: LayerSpec): Buffer => {
  const body = layer.zeros === true ? Buffer.alloc(layer.size) : seededBytes(layer.seed, layer.size)
  if (layer.zeros === true) seededBytes(layer.seed, Math.min(512, layer.size)).copy(body)
  const padding = Buffer.alloc((512 - (layer.size % 512)) % 512)
  const name = `layer-${createHash("sha256").update(layer.seed).digest("hex").slice(0, 16)}.bin`
  return Buffer.concat([tarHeader(name, layer.size), body, padding, Buffer.alloc(1024)])
}

const blob = (mediaType: string, bytes: Buffer): Blob => ({ mediaType, digest: sha256(bytes), size: bytes.length, bytes })

const hostArchitecture = (): string => {
  switch (process.arch) {
    case "x64":
      return "amd64"
    case "ia32":
      return "386"
    default:
      return process.arch
  }
}

/**
 * Builds an OCI image, by default for this host's platform (containerd refuses to unpack another's). Level-0
 * gzip keeps big random layers cheap to build: they would not compress anyway.
 */
export const buildImage = (
  layers: ReadonlyArray<LayerSpec>,
  platform: { readonly architecture: string; readonly os: string } = { architecture: hostArchitecture(), os: "linux" }
): ImageContent => {
  const built = layers.map((layer) => {
    const tar = layerTar(layer)
    const gz = gzipSync(tar, { level: layer.zeros === true ? 1 : layer.size > 1 << 20 ? 0 : 6 })
    return { diffId: sha256(tar), blob: blob("application/vnd.oci.image.layer.v1.tar+gzip", gz) }
  })
  const config = blob(
    "application/vnd.oci.image.config.v1+json",
    Buffer.from(
      JSON.stringify({
        architecture: platform.architecture,
        os: platform.os,
        config: {},
        rootfs: { type: "layers", diff_ids: built.map((layer) => layer.diffId) }
      })
    )
  )
  const manifest = blob(
    "application/vnd.oci.image.manifest.v1+json",
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: config.mediaType, digest: config.digest, size: config.size },
        layers: built.map(({ blob }) => ({ mediaType: blob.mediaType, digest: blob.digest, size: blob.size }))
      })
    )
  )
  return { config, layers: built.map((layer) => layer.blob), manifest }
}

const headers = (registry: Registry, extra: Record<string, string> = {}): Record<string, string> =>
  registry.auth === undefined
    ? extra
    : { ...extra, authorization: `Basic ${Buffer.from(`${registry.auth.username}:${registry.auth.password}`).toString("base64")}` }

const expectStatus = async (response: Response, expected: ReadonlyArray<number>, what: string): Promise<void> => {
  if (!expected.includes(response.status)) {
    throw new Error(`${what}: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`)
  }
}

/** Monolithic upload: POST for an upload URL, then PUT the bytes with their digest. */
const pushBlob = async (registry: Registry, repository: string, content: Blob): Promise<void> => {
  const base = `http://${registry.host}/v2/${repository}/blobs`
  const head = await fetch(`${base}/${content.digest}`, { method: "HEAD", headers: headers(registry) })
  if (head.status === 200) return
  const start = await fetch(`${base}/uploads/`, { method: "POST", headers: headers(registry) })
  await expectStatus(start, [202], `start upload to ${repository}`)
  const location = start.headers.get("location")
  if (location === null) throw new Error(`start upload to ${repository}: no Location`)
  const url = new URL(location, `http://${registry.host}`)
  url.searchParams.set("digest", content.digest)
  const put = await fetch(url, {
    method: "PUT",
    headers: headers(registry, { "content-type": "application/octet-stream", "content-length": String(content.size) }),
    body: content.bytes
  })
  await expectStatus(put, [201], `upload ${content.digest} to ${repository}`)
}

/** Points `tag` at the manifest (pushing the same manifest again moves or adds a tag). */
export const tagImage = async (registry: Registry, repository: string, image: ImageContent, tag: string): Promise<void> => {
  const response = await fetch(`http://${registry.host}/v2/${repository}/manifests/${tag}`, {
    method: "PUT",
    headers: headers(registry, { "content-type": image.manifest.mediaType }),
    body: image.manifest.bytes
  })
  await expectStatus(response, [201], `put manifest ${repository}:${tag}`)
}

export const pushImage = async (
  registry: Registry,
  repository: string,
  image: ImageContent,
  tags: ReadonlyArray<string>
): Promise<PushedImage> => {
  for (const content of [...image.layers, image.config]) await pushBlob(registry, repository, content)
  for (const tag of tags) await tagImage(registry, repository, image, tag)
  const name = `${registry.host}/${repository}`
  return {
    repository,
    tags,
    digest: image.manifest.digest,
    imageId: image.config.digest,
    blobBytes: image.config.size + image.layers.reduce((sum, layer) => sum + layer.size, 0),
    reference: (tag = tags[0] ?? "latest") => `${name}:${tag}`,
    digestReference: `${name}@${image.manifest.digest}`
  }
}

/** Build and push in one step. */
export const publishImage = (
  registry: Registry,
  repository: string,
  layers: ReadonlyArray<LayerSpec>,
  tags: ReadonlyArray<string>
): Promise<PushedImage> => pushImage(registry, repository, buildImage(layers), tags)

export interface PushedIndex {
  /** The index digest: `name@<digest>` makes the runtime choose the manifest for its platform. */
  readonly digest: string
  readonly reference: (tag?: string) => string
  readonly digestReference: string
}

/**
 * Pushes several images (each with its platform) and an OCI index over them under `tags`: a
 * multi-platform image as registries serve most public ones.
 */
export const pushIndex = async (
  registry: Registry,
  repository: string,
  entries: ReadonlyArray<{ readonly image: ImageContent; readonly architecture: string; readonly os: string }>,
  tags: ReadonlyArray<string>
): Promise<PushedIndex> => {
  for (const { image } of entries) {
    for (const content of [...image.layers, image.config]) await pushBlob(registry, repository, content)
    await tagImage(registry, repository, image, image.manifest.digest)
  }
  const index = blob(
    "application/vnd.oci.image.index.v1+json",
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.index.v1+json",
        manifests: entries.map(({ image, architecture, os }) => ({
          mediaType: image.manifest.mediaType,
          digest: image.manifest.digest,
          size: image.manifest.size,
          platform: { architecture, os }
        }))
      })
    )
  )
  for (const tag of tags) {
    const response = await fetch(`http://${registry.host}/v2/${repository}/manifests/${tag}`, {
      method: "PUT",
      headers: headers(registry, { "content-type": index.mediaType }),
      body: index.bytes
    })
    await expectStatus(response, [201], `put index ${repository}:${tag}`)
  }
  const name = `${registry.host}/${repository}`
  return {
    digest: index.digest,
    reference: (tag = tags[0] ?? "latest") => `${name}:${tag}`,
    digestReference: `${name}@${index.digest}`
  }
}

export { hostArchitecture }
