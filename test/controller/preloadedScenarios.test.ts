// KEP-2535 on the in-memory cluster: the controller reads each node's kubelet image verification
// policy (the daemons write it into their NodeImage's status) and says, on each job, where pods may
// start its image without credentials and where they must check theirs with the registry first.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ImagePullJobStatus } from "../../src/api/imagePullJob.ts"
import type { KubeletImageVerification } from "../../src/api/kubeletImageVerification.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { advance, get, harnessLayer, readyNode, startCluster } from "../support/controllerHarness.ts"

const status = (o: KubeObject) => o["status"] as ImagePullJobStatus
const condition = (o: KubeObject, type: string) => status(o).conditions?.find((c) => c.type === type)

/** What a daemon writes when it has read its kubelet's configuration. */
const setPolicy = (node: string, verification: KubeletImageVerification) =>
  Effect.flatMap(Effect.service(KubeApi), (api) =>
    api.patch(resources.nodeImage, { name: node }, { status: { kubeletImageVerification: verification } }, "status")
  )

const warnings = (reason: string) =>
  Effect.map(
    Effect.flatMap(Effect.service(KubeApi), (api) => api.list(resources.event, { namespace: "default" })),
    (list) => list.items.filter((e) => e["reason"] === reason).map((e) => String(e["message"]))
  )

const job = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.kruise.io/v1alpha1",
  kind: "ImagePullJob",
  metadata: { name, namespace: "default" },
  spec: { parallelism: 10, completionPolicy: { type: "Never" }, ...spec }
})

const policies: Record<string, KubeletImageVerification> = {
  n1: { policy: "NeverVerifyPreloadedImages" },
  n2: { policy: "AlwaysVerify" },
  n3: { policy: "NeverVerifyAllowlistedImages", allowlist: ["ghcr.io/acme/*"] },
  n4: { policy: "NeverVerifyAllowlistedImages", allowlist: ["docker.io/library/nginx"] }
  // n5's daemon does not read its kubelet's configuration: the policy is unknown.
}

describe("the nodes' kubelet image verification on the in-memory cluster", () => {
  it.effect("a job pulled with credentials: Warnings when it starts and when the policies change, never per node or reconcile", () =>
    Effect.gen(function* () {
      const nodes = ["n1", "n2", "n3", "n4", "n5"]
      yield* startCluster(
        nodes.map((n) => readyNode(n)),
        { pullMs: 2000, authenticated: (_node, image) => image === "ghcr.io/acme/app" }
      )
      for (const [node, verification] of Object.entries(policies)) yield* setPolicy(node, verification)
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("app", { image: "ghcr.io/acme/app:1" }))
      yield* advance(20_000)

      let current = yield* get(resources.imagePullJob, "app", "default")
      expect(status(current).succeeded).toBe(5)
      const unverified = condition(current, "PreloadedImageUnverified")
      expect(unverified).toMatchObject({ status: "True", reason: "KubeletSkipsVerification" })
      expect(unverified?.message).toContain("(kubelet: NeverVerifyAllowlistedImages (allowlisted), NeverVerifyPreloadedImages)")
      expect(unverified?.message).toMatch(/on (n1, n3|n3, n1):/)
      const reverified = condition(current, "PreloadedImageReverified")
      expect(reverified).toMatchObject({ status: "True", reason: "KubeletVerifiesAtStart" })
      expect(reverified?.message).toMatch(/on (n2, n4|n4, n2):/)
      expect(reverified?.message).toContain("(kubelet: AlwaysVerify, NeverVerifyAllowlistedImages (not allowlisted))")
      // One each, naming the count, however many reconciles saw them.
      yield* advance(60_000)
      expect(yield* warnings("PreloadedImageUnverified")).toEqual([expect.stringContaining("on 2 nodes (")])
      expect(yield* warnings("PreloadedImageReverified")).toEqual([expect.stringContaining("on 2 nodes (")])

      // n2's kubelet gets NeverVerify: another policy lets pods in (news), and one fewer makes them check.
      yield* setPolicy("n2", { policy: "NeverVerify" })
      yield* advance(10_000)
      current = yield* get(resources.imagePullJob, "app", "default")
      expect(condition(current, "PreloadedImageUnverified")?.message).toContain(
        "(kubelet: NeverVerify, NeverVerifyAllowlistedImages (allowlisted), NeverVerifyPreloadedImages)"
      )
      expect(yield* warnings("PreloadedImageUnverified")).toHaveLength(2)
      expect(yield* warnings("PreloadedImageReverified")).toHaveLength(2)

      // n4 joins a policy already named: no Warning for it; no node makes pods check any more: False.
      yield* setPolicy("n4", { policy: "NeverVerifyPreloadedImages" })
      yield* advance(10_000)
      current = yield* get(resources.imagePullJob, "app", "default")
      expect(condition(current, "PreloadedImageReverified")).toMatchObject({ status: "False", reason: "NoNodeVerifiesAtStart" })
      expect(condition(current, "PreloadedImageUnverified")).toMatchObject({ status: "True" })
      expect(yield* warnings("PreloadedImageUnverified")).toHaveLength(2)
      expect(yield* warnings("PreloadedImageReverified")).toHaveLength(2)
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a public image pulled anonymously: only where pods check with the registry at start", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1"), readyNode("n2")], { pullMs: 2000 })
      yield* setPolicy("n1", { policy: "NeverVerifyPreloadedImages" })
      yield* setPolicy("n2", { policy: "AlwaysVerify" })
      const api = yield* KubeApi
      yield* api.create(resources.imagePullJob, job("web", { image: "nginx:1.25" }))
      yield* advance(20_000)
      const current = yield* get(resources.imagePullJob, "web", "default")
      expect(condition(current, "PreloadedImageUnverified")).toBeUndefined()
      expect(condition(current, "PreloadedImageReverified")).toMatchObject({ status: "True" })
      expect(yield* warnings("PreloadedImageReverified")).toEqual([
        'pods starting "nginx:1.25" check their credentials with the registry first on 1 node (n2): their kubelets verify images they ' +
          "did not pull (kubelet: AlwaysVerify); imagePullPolicy IfNotPresent pulls again at start, " +
          "Never fails unless the kubelet pulled the image before for the same credentials; `preheat allowlist` prints entries " +
          "for preloadedImagesVerificationAllowlist"
      ])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )

  it.effect("a job naming pull secrets counts as needing credentials before any node says how it pulled", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 2000 })
      yield* setPolicy("n1", { policy: "Disabled" })
      const api = yield* KubeApi
      const auth = Buffer.from("user:pw").toString("base64")
      yield* api.create(resources.secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "registry", namespace: "default" },
        type: "kubernetes.io/dockerconfigjson",
        data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { "ghcr.io": { auth } } })).toString("base64") }
      })
      yield* api.create(resources.imagePullJob, job("private", { image: "ghcr.io/acme/app:2", pullSecrets: ["registry"] }))
      yield* advance(20_000)
      const current = yield* get(resources.imagePullJob, "private", "default")
      expect(condition(current, "PreloadedImageUnverified")).toMatchObject({ status: "True" })
      expect(yield* warnings("PreloadedImageUnverified")).toEqual([
        `"ghcr.io/acme/app:2" needs registry credentials, but any pod can start it without them on 1 node (n1): their kubelets do ` +
          "not verify images they did not pull (kubelet: KubeletEnsureSecretPulledImages off); set " +
          "AlwaysVerify, or NeverVerifyAllowlistedImages without this image, to have pods show their own"
      ])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})

describe("an ImageListPullJob's children", () => {
  it.effect("the list job names the images whose children have the condition, with one Warning when it turns True", () =>
    Effect.gen(function* () {
      yield* startCluster([readyNode("n1")], { pullMs: 2000 })
      yield* setPolicy("n1", { policy: "AlwaysVerify" })
      const api = yield* KubeApi
      yield* api.create(resources.imageListPullJob, {
        apiVersion: "apps.kruise.io/v1alpha1",
        kind: "ImageListPullJob",
        metadata: { name: "base", namespace: "default" },
        spec: { images: ["nginx:1.25", "busybox:1.36"], parallelism: 10, completionPolicy: { type: "Never" } }
      })
      yield* advance(30_000)
      const list = yield* get(resources.imageListPullJob, "base", "default")
      const reverified = (list["status"] as ImagePullJobStatus).conditions?.find((c) => c.type === "PreloadedImageReverified")
      expect(reverified).toMatchObject({ status: "True", reason: "KubeletVerifiesAtStart" })
      expect(reverified?.message).toMatch(
        /^2 of the images are checked with the registry when pods start them on some of their nodes .*: "busybox:1\.36" \(ImagePullJob base-\w+\), "nginx:1\.25" \(ImagePullJob base-\w+\)$/
      )
      const events = yield* Effect.map(
        Effect.flatMap(Effect.service(KubeApi), (api) => api.list(resources.event, { namespace: "default" })),
        (l) => l.items.filter((e) => e["reason"] === "PreloadedImageReverified")
      )
      // One per child, one for the list job.
      expect(events.map((e) => (e["involvedObject"] as { kind: string }).kind).sort()).toEqual([
        "ImageListPullJob",
        "ImagePullJob",
        "ImagePullJob"
      ])
    }).pipe(Effect.scoped, Effect.provide(harnessLayer))
  )
})
