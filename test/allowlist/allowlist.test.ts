import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { parse } from "yaml"
import { InMemoryKubeApi } from "../../harness/layers/inMemoryKubeApi.ts"
import { allowlistEntries, renderAllowlist } from "../../src/allowlist/entries.ts"
import { NoSuchJob, runAllowlist } from "../../src/allowlist/runAllowlist.ts"
import { preloadedVerdict } from "../../src/api/kubeletImageVerification.ts"
import { verificationOf } from "../../src/daemon/kubeletConfig/decode.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"

const kruise = "apps.kruise.io/v1alpha1"

const setup = Effect.gen(function* () {
  const api = yield* KubeApi
  const pullJob = (name: string, image: string, pullSecrets?: ReadonlyArray<string>) =>
    api.create(resources.imagePullJob, {
      apiVersion: kruise,
      kind: "ImagePullJob",
      metadata: { name, namespace: "shop" },
      spec: { image, completionPolicy: { type: "Never" }, ...(pullSecrets === undefined ? {} : { pullSecrets }) }
    })
  yield* pullJob("web", "nginx:1.25.3")
  yield* pullJob("app", `ghcr.io/acme/app@sha256:${"c".repeat(64)}`, ["acme-registry"])
  yield* pullJob("elsewhere", "redis:7")
  yield* api.create(resources.imageListPullJob, {
    apiVersion: kruise,
    kind: "ImageListPullJob",
    metadata: { name: "base", namespace: "shop" },
    spec: { images: ["busybox:1.36", "docker.io/library/nginx:1.27", "registry.k8s.io/pause:3.9"], completionPolicy: { type: "Never" } }
  })
  yield* api.create(resources.imagePullJob, {
    apiVersion: kruise,
    kind: "ImagePullJob",
    metadata: { name: "other", namespace: "default" },
    spec: { image: "quay.io/other/thing:1", completionPolicy: { type: "Never" } }
  })
})

/** The printed YAML as the kubelet reads it, merged into a kubelet's configuration file. */
const asKubeletConfig = (printed: string) =>
  verificationOf({
    path: "/var/lib/kubelet/config.yaml",
    text: `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n${printed}`
  })

describe("preheat allowlist", () => {
  it.effect("prints entries for the named jobs that the kubelet takes, and that exempt exactly their images", () =>
    Effect.gen(function* () {
      yield* setup
      const printed = yield* runAllowlist({ namespace: "shop", jobs: ["web", "app", "base"] })
      expect(printed).toBe(
        [
          "# preloadedImagesVerificationAllowlist for the images of preheat's jobs in namespace shop.",
          "# With NeverVerifyAllowlistedImages the kubelet lets pods start these images, which it did not pull itself,",
          "# without checking their credentials with the registry; every other image it did not pull is checked.",
          "# Merge into the kubelet's configuration (KubeletConfiguration, kubelet.config.k8s.io/v1beta1); it reads it when it starts.",
          "imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages",
          "preloadedImagesVerificationAllowlist:",
          "  - docker.io/library/busybox # ImageListPullJob base",
          "  - docker.io/library/nginx # ImageListPullJob base, ImagePullJob web",
          "  - ghcr.io/acme/app # ImagePullJob app; has pull secrets: any pod on the node can then start it without credentials",
          "  - registry.k8s.io/pause # ImageListPullJob base",
          ""
        ].join("\n")
      )
      const verification = asKubeletConfig(printed)
      expect(verification).toMatchObject({ policy: "NeverVerifyAllowlistedImages" })
      for (const image of ["nginx:1.25.3", "nginx:1.27", "busybox:1.36", "ghcr.io/acme/app:2", "registry.k8s.io/pause:3.10"]) {
        expect(preloadedVerdict(verification, image).access).toBe("unverified")
      }
      expect(preloadedVerdict(verification, "redis:7").access).toBe("reverified")
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("no job named: every job of the namespace", () =>
    Effect.gen(function* () {
      yield* setup
      const printed = yield* runAllowlist({ namespace: "shop", jobs: [] })
      const listed = (parse(printed) as { preloadedImagesVerificationAllowlist: Array<string> }).preloadedImagesVerificationAllowlist
      expect(listed).toEqual([
        "docker.io/library/busybox",
        "docker.io/library/nginx",
        "docker.io/library/redis",
        "ghcr.io/acme/app",
        "registry.k8s.io/pause"
      ])
      const empty = yield* runAllowlist({ namespace: "empty", jobs: [] })
      expect(empty).toContain("# no images: with this list the kubelet checks every image it did not pull")
      expect(asKubeletConfig(empty)).toMatchObject({ policy: "NeverVerifyAllowlistedImages", allowlist: [] })
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it.effect("a job the namespace does not have is an error naming it", () =>
    Effect.gen(function* () {
      yield* setup
      const error = yield* Effect.flip(runAllowlist({ namespace: "shop", jobs: ["web", "other", "gone"] }))
      expect(error).toBeInstanceOf(NoSuchJob)
      expect(error.message).toBe("no ImagePullJob or ImageListPullJob named other, gone in namespace shop")
    }).pipe(Effect.provide(InMemoryKubeApi.layer))
  )

  it("a job that does not decode is left out, said in a comment on one line", () => {
    const printed = renderAllowlist("shop", allowlistEntries([{ job: "ImagePullJob web", images: ["nginx:1"], pullSecrets: false }]), [
      { job: "ImagePullJob broken", reason: 'spec.image: invalid image "Nginx:1\\nX": repository name must be lowercase\nsecond line' }
    ])
    expect(printed.split("\n").filter((l) => l.startsWith("# left out"))).toEqual([
      '# left out: ImagePullJob broken: spec.image: invalid image "Nginx:1\\nX": repository name must be lowercase\\nsecond line'
    ])
    expect(asKubeletConfig(printed).allowlist).toEqual(["docker.io/library/nginx"])
  })
})
