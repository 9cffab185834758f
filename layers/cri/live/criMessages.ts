import type { ImageInfo, PullRequest } from "../../../src/cri/CriRuntime.ts"
import type { ImageMessage } from "./grpcPackages.ts"

/** Between the service's types and runtime.v1 messages (proto field names). */

export const toImageInfo = (image: ImageMessage): ImageInfo => ({
  id: image.id,
  repoTags: image.repo_tags,
  repoDigests: image.repo_digests,
  size: image.size
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
