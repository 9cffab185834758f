import { describe, expect, it } from "@effect/vitest"
import { GrpcCallFailed } from "../../../../layers/cri/live/grpcCalls.ts"
import { criErrorFrom } from "../../../../layers/cri/live/grpcErrors.ts"

const failed = (code: number | undefined, details: string | undefined, text = "2 UNKNOWN: something") =>
  new GrpcCallFailed({ method: "PullImage", code, details, text })

const pull = { method: "PullImage", image: "nginx:1.25" }

describe("criErrorFrom", () => {
  it("maps the status codes the daemon tells apart", () => {
    expect(criErrorFrom(failed(14, "connection refused"), pull)).toMatchObject({
      _tag: "RuntimeUnavailable",
      message: "PullImage: connection refused"
    })
    expect(criErrorFrom(failed(1, "runtime went away"), pull)._tag).toBe("RuntimeUnavailable")
    expect(criErrorFrom(failed(4, ""), pull)).toMatchObject({ _tag: "DeadlineExceeded", image: "nginx:1.25" })
    expect(criErrorFrom(failed(4, ""), { method: "Version" })).toMatchObject({
      _tag: "RuntimeUnavailable",
      message: "Version: no answer before the deadline"
    })
    expect(criErrorFrom(failed(5, "no such image"), pull)).toMatchObject({ _tag: "ImageNotFound", message: "no such image" })
  })

  it("reads containerd's UNKNOWN by its text: 401s and bad references", () => {
    expect(criErrorFrom(failed(2, "failed to resolve: 401 Unauthorized"), pull)._tag).toBe("Unauthorized")
    expect(criErrorFrom(failed(2, "invalid reference format"), pull)._tag).toBe("InvalidReference")
    expect(criErrorFrom(failed(2, "disk full"), pull)).toMatchObject({ _tag: "RuntimeFailure", message: "disk full" })
    expect(criErrorFrom(failed(13, "boom"), pull)).toMatchObject({ _tag: "RuntimeFailure", message: "PullImage: boom" })
  })

  it("reads a registry's rate limit (HTTP 429, Docker Hub's toomanyrequests) as RegistryThrottled", () => {
    // containerd 1.6's words, as the e2e suite's throttling proxy drew them (test/e2e/throttle.test.ts).
    const resolving =
      'failed to pull and unpack image "127.0.0.1:37795/e2e/app:v1": failed to resolve reference "127.0.0.1:37795/e2e/app:v1": ' +
      "pulling from host 127.0.0.1:37795 failed with status code [manifests v1]: 429 Too Many Requests"
    expect(criErrorFrom(failed(2, resolving), pull)).toMatchObject({ _tag: "RegistryThrottled", image: "nginx:1.25", message: resolving })
    const fetching =
      "failed to copy: httpReadSeeker: failed open: unexpected status code http://127.0.0.1:37795/v2/e2e/app/blobs/sha256:37d7: " +
      "429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit."
    expect(criErrorFrom(failed(2, fetching), pull)._tag).toBe("RegistryThrottled")
    expect(criErrorFrom(failed(2, "TOOMANYREQUESTS: slow down"), pull)._tag).toBe("RegistryThrottled")
    // A 429 elsewhere in a message (a port, a digest) is no rate limit.
    expect(criErrorFrom(failed(2, "dial tcp 10.0.0.1:429: connection refused"), pull)._tag).toBe("RuntimeFailure")
    expect(criErrorFrom(failed(2, "toomanyrequests"), { method: "ImageFsInfo" })._tag).toBe("RuntimeFailure")
  })

  it("falls back to grpc-js's text without details, and names the call for a failure without a status", () => {
    expect(criErrorFrom(failed(13, undefined, "13 INTERNAL: boom"), pull)).toMatchObject({ message: "PullImage: 13 INTERNAL: boom" })
    expect(criErrorFrom(failed(undefined, undefined, "Error: socket hang up"), pull)).toMatchObject({
      _tag: "RuntimeFailure",
      message: "PullImage: Error: socket hang up"
    })
  })

  it("redacts the call's secrets from the runtime's words", () => {
    const error = criErrorFrom(failed(2, "401 Unauthorized for user:hunter22"), { ...pull, secrets: ["hunter22"] })
    expect(error).toMatchObject({ _tag: "Unauthorized", message: "401 Unauthorized for user:<redacted>" })
  })
})
