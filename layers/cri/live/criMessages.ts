import type { ImageFsUsage, ImageInfo, PullRequest } from "../../../src/cri/CriRuntime.ts"
import type { FilesystemUsageMessage, ImageMessage } from "./grpcPackages.ts"

/** Between the service's types and runtime.v1 messages (proto field names). */

export const toImageInfo = (image: ImageMessage): ImageInfo => ({
  id: image.id,
  repoTags: image.repo_tags,
  repoDigests: image.repo_digests,
  size: image.size
})

/** A FilesystemUsage; a runtime that leaves a field out gives "" or 0 (the daemon then knows no mountpoint). */
export const toImageFsUsage = (usage: FilesystemUsageMessage): ImageFsUsage => ({
  mountpoint: usage.fs_id?.mountpoint ?? "",
  usedBytes: usage.used_bytes?.value ?? 0,
  inodesUsed: usage.inodes_used?.value ?? 0
})

/**
 * PullImageRequest. `server_address` stays empty: containerd drops credentials whose
 * server_address is not a URL naming the image's host, and empty means "for this pull".
 */
export const pullImageRequest = (request: PullRequest): object => {
  const auth = request.auth
  const sandbox = request.sandboxConfig
  return {
    image: { image: request.image },
    ...(auth === undefined
      ? {}
      : {
          auth: {
            username: auth.username ?? "",
            password: auth.password ?? "",
            auth: auth.auth ?? "",
            identity_token: auth.identityToken ?? "",
            registry_token: auth.registryToken ?? ""
          }
        }),
    ...(sandbox === undefined
      ? {}
      : {
          sandbox_config: { labels: sandbox.labels ?? {}, annotations: sandbox.annotations ?? {} }
        })
  }
}
