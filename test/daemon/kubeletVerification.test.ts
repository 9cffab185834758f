import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { TestClock } from "effect/testing"
import { SimulatedRuntime } from "../../harness/layers/simulatedRuntime/SimulatedRuntime.ts"
import type { KubeletImageVerification } from "../../src/api/kubeletImageVerification.ts"
import type { RegistryAuth } from "../../src/cri/CriRuntime.ts"
import { verificationOf } from "../../src/daemon/kubeletConfig/decode.ts"
import { readKubeletVerification } from "../../src/daemon/kubeletConfig/read.ts"
import { KubeApi } from "../../src/kube/KubeApi.ts"
import { resources } from "../../src/kube/resources.ts"
import { Metrics } from "../../src/ops/metrics.ts"
import {
  advance,
  createNodeImage,
  launch,
  nodeStatus,
  PatchLog,
  secret,
  secretNamespace,
  tag,
  tagStatus,
  testLayer
} from "./support/daemonHarness.ts"

// --- configuration files as the kubelet's installers write them (field names: k8s.io/kubelet/config/v1beta1 types.go) ----

/** kubeadm's /var/lib/kubelet/config.yaml (kubeadm init or join), no verification settings. */
const kubeadm = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
healthzBindAddress: 127.0.0.1
healthzPort: 10248
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  verbosity: 0
rotateCertificates: true
staticPodPath: /etc/kubernetes/manifests
`

const withLines = (yaml: string, lines: string) => `${yaml}${lines}\n`

/** EKS on AL2023: nodeadm's /etc/kubernetes/kubelet/config.json, JSON. */
const eksConfig = JSON.stringify(
  {
    kind: "KubeletConfiguration",
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    address: "0.0.0.0",
    authentication: { anonymous: { enabled: false }, webhook: { cacheTTL: "2m0s", enabled: true } },
    authorization: { mode: "Webhook" },
    cgroupDriver: "systemd",
    clusterDNS: ["10.100.0.10"],
    containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
    featureGates: { RotateKubeletServerCertificate: true },
    providerID: "aws:///eu-west-1a/i-0abc",
    serializeImagePulls: false
  },
  null,
  4
)

/** A NodeConfig's spec.kubelet.config, as nodeadm writes it to config.json.d/00-nodeadm.conf. */
const eksDropIn = (fields: Record<string, unknown>) =>
  JSON.stringify({ kind: "KubeletConfiguration", apiVersion: "kubelet.config.k8s.io/v1beta1", ...fields }, null, 4)

/** GKE's /home/kubernetes/kubelet-config.yaml. */
const gke = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: /etc/srv/kubernetes/pki/ca-certificates.crt
authorization:
  mode: Webhook
cgroupRoot: /
clusterDNS:
- 10.0.0.10
clusterDomain: cluster.local
featureGates:
  RotateKubeletServerCertificate: true
  KubeletEnsureSecretPulledImages: false
kind: KubeletConfiguration
kubeReserved:
  cpu: 1060m
  memory: 1019Mi
readOnlyPort: 10255
serverTLSBootstrap: true
`

const main = (text: string, path = "/var/lib/kubelet/config.yaml") => ({ path, text })

describe("the kubelet's configuration: decoded as the kubelet reads it", () => {
  it("no setting: the kubelet's default, NeverVerifyPreloadedImages (KubeletEnsureSecretPulledImages on from 1.35)", () => {
    expect(verificationOf(main(kubeadm))).toEqual({
      policy: "NeverVerifyPreloadedImages",
      source: "/var/lib/kubelet/config.yaml",
      message: "imagePullCredentialsVerificationPolicy not set: the kubelet's default, NeverVerifyPreloadedImages"
    })
  })

  it("each policy as set", () => {
    for (const policy of ["NeverVerify", "NeverVerifyPreloadedImages", "AlwaysVerify"] as const) {
      expect(verificationOf(main(withLines(kubeadm, `imagePullCredentialsVerificationPolicy: ${policy}`)))).toEqual({
        policy,
        source: "/var/lib/kubelet/config.yaml"
      })
    }
    const allowlisted = withLines(
      kubeadm,
      "imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist:\n- docker.io/library/nginx\n- ghcr.io/acme/*"
    )
    expect(verificationOf(main(allowlisted))).toEqual({
      policy: "NeverVerifyAllowlistedImages",
      allowlist: ["docker.io/library/nginx", "ghcr.io/acme/*"],
      source: "/var/lib/kubelet/config.yaml"
    })
  })

  it("the feature gate off (GKE's file here) verifies nothing: Disabled", () => {
    const decoded = verificationOf(main(gke, "/home/kubernetes/kubelet-config.yaml"))
    expect(decoded.policy).toBe("Disabled")
    expect(decoded.message).toContain("KubeletEnsureSecretPulledImages is off")
    // Read as YAML 1.1, as the kubelet reads it.
    expect(verificationOf(main(withLines(kubeadm, "featureGates:\n  KubeletEnsureSecretPulledImages: no"))).policy).toBe("Disabled")
    // AllBeta: false turns off every beta gate not named, this one among them (beta from 1.35).
    expect(verificationOf(main(withLines(kubeadm, "featureGates:\n  AllBeta: false"))).policy).toBe("Disabled")
    expect(
      verificationOf(main(withLines(kubeadm, "featureGates:\n  AllBeta: false\n  KubeletEnsureSecretPulledImages: true"))).policy
    ).toBe("NeverVerifyPreloadedImages")
  })

  it("EKS AL2023: config.json with its drop-ins merged in lexical order, as JSON merge patches", () => {
    const base = main(eksConfig, "/etc/kubernetes/kubelet/config.json")
    const dir = "/etc/kubernetes/kubelet/config.json.d"
    expect(verificationOf(base).policy).toBe("NeverVerifyPreloadedImages")
    const merged = verificationOf(base, [
      {
        path: `${dir}/00-nodeadm.conf`,
        text: eksDropIn({ imagePullCredentialsVerificationPolicy: "AlwaysVerify", clusterDNS: ["1.1.1.1"] })
      },
      {
        path: `${dir}/50-allowlist.conf`,
        text: eksDropIn({
          imagePullCredentialsVerificationPolicy: "NeverVerifyAllowlistedImages",
          preloadedImagesVerificationAllowlist: ["registry.k8s.io/*"]
        })
      }
    ])
    expect(merged).toEqual({
      policy: "NeverVerifyAllowlistedImages",
      allowlist: ["registry.k8s.io/*"],
      source: `/etc/kubernetes/kubelet/config.json with drop-ins ${dir}/00-nodeadm.conf, ${dir}/50-allowlist.conf`
    })
    // Maps merge key by key: a drop-in's featureGates keeps the base file's other gates.
    expect(
      verificationOf(base, [
        { path: `${dir}/00-nodeadm.conf`, text: eksDropIn({ featureGates: { KubeletEnsureSecretPulledImages: false } }) }
      ]).policy
    ).toBe("Disabled")
  })

  it("what the kubelet refuses to start with is Unknown, in the kubelet's words", () => {
    const decode = (lines: string) => verificationOf(main(withLines(kubeadm, lines)))
    expect(decode("imagePullCredentialsVerificationPolicy: Sometimes")).toMatchObject({
      policy: "Unknown",
      message:
        'the kubelet refuses this configuration: option "Sometimes" specified for imagePullCredentialsVerificationPolicy. Valid options are "NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages", "AlwaysVerify"'
    })
    expect(decode("preloadedImagesVerificationAllowlist:\n- docker.io/library/nginx").message).toContain(
      "can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVerificationPolicy` is not"
    )
    expect(
      decode("imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages\npreloadedImagesVerificationAllowlist:\n- nginx")
    ).toMatchObject({
      policy: "Unknown",
      message:
        "the kubelet refuses this configuration: invalid image pattern in `preloadedImagesVerificationAllowlist`: neither tag nor digest is accepted in an image reference: nginx"
    })
    expect(
      decode("featureGates:\n  KubeletEnsureSecretPulledImages: false\nimagePullCredentialsVerificationPolicy: AlwaysVerify").message
    ).toBe(
      "the kubelet refuses this configuration: `imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled"
    )
    expect(decode("featureGates:\n  KubeletEnsureSecretPulledImages: maybe").message).toBe(
      "featureGates is not a map of feature names to true or false"
    )
  })

  it("a file that is no KubeletConfiguration is Unknown, saying which and why", () => {
    expect(verificationOf(main("")).message).toBe("/var/lib/kubelet/config.yaml is empty")
    expect(verificationOf(main("kind: [")).message).toMatch(/^\/var\/lib\/kubelet\/config\.yaml is not YAML or JSON: /)
    expect(verificationOf(main("apiVersion: v1\nkind: Config\n")).message).toBe(
      '/var/lib/kubelet/config.yaml is not a KubeletConfiguration of kubelet.config.k8s.io/v1beta1 (kind "Config", apiVersion "v1")'
    )
    expect(verificationOf(main(kubeadm), [{ path: "/d/10.conf", text: "clusterDNS: []" }]).message).toBe(
      "/d/10.conf is not a KubeletConfiguration of kubelet.config.k8s.io/v1beta1 (kind null, apiVersion null)"
    )
  })
})

/**
 * Simulated time in steps of a second, each with a moment of real time: the files are real, and
 * their reads complete only when the event loop gets to them.
 */
const advanceWithFiles = (millis: number) =>
  Effect.gen(function* () {
    for (let elapsed = 0; elapsed < millis; elapsed += 1000) {
      yield* advance(0)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      yield* TestClock.adjust(1000)
    }
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    yield* advance(0)
  })

describe("the kubelet's configuration: read from the node's files", () => {
  let root: string
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "preheat-kubelet-config-"))
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))

  const put = (path: string, text: string) => {
    mkdirSync(join(root, path, ".."), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  const read = (file: string, dir?: string) =>
    Effect.flatMap(Effect.service(FileSystem.FileSystem), (fs) => readKubeletVerification(fs, { file, dir, hostRoot: root }))

  it.effect("under --host-root; a missing file is Unknown and not found", () =>
    Effect.gen(function* () {
      put("var/lib/kubelet/config.yaml", withLines(kubeadm, "imagePullCredentialsVerificationPolicy: AlwaysVerify"))
      expect(yield* read("/var/lib/kubelet/config.yaml")).toEqual({
        verification: { policy: "AlwaysVerify", source: "/var/lib/kubelet/config.yaml" },
        found: true
      })
      const missing = yield* read("/etc/kubernetes/kubelet/config.json")
      expect(missing.found).toBe(false)
      expect(missing.verification).toEqual({
        policy: "Unknown",
        source: "/etc/kubernetes/kubelet/config.json",
        message:
          "no kubelet configuration at /etc/kubernetes/kubelet/config.json: mount the kubelet's --config file there (read-only) or name it with --kubelet-config"
      })
      // An empty file is not the kubelet's (it refuses one): what a FileOrCreate mount leaves where the node has none.
      put("var/lib/kubelet/empty.yaml", "")
      expect(yield* read("/var/lib/kubelet/empty.yaml")).toEqual({
        verification: {
          policy: "Unknown",
          source: "/var/lib/kubelet/empty.yaml",
          message:
            "no kubelet configuration at /var/lib/kubelet/empty.yaml (an empty file): name the kubelet's --config file with --kubelet-config"
        },
        found: false
      })
      // A directory where the file should be (a hostPath mount of a path the node lacks makes one).
      mkdirSync(join(root, "var/lib/kubelet/dir.yaml"))
      const directory = yield* read("/var/lib/kubelet/dir.yaml")
      expect(directory.found).toBe(true)
      expect(directory.verification.message).toMatch(/^\/var\/lib\/kubelet\/dir\.yaml could not be read: /)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("drop-in files: .conf only, in the order Go's WalkDir visits them, subdirectories included", () =>
    Effect.gen(function* () {
      const dir = "/etc/kubernetes/kubelet/config.json.d"
      put("etc/kubernetes/kubelet/config.json", eksConfig)
      put(`${dir}/10-first.conf`, eksDropIn({ imagePullCredentialsVerificationPolicy: "AlwaysVerify" }))
      put(`${dir}/2/50-nested.conf`, eksDropIn({ imagePullCredentialsVerificationPolicy: "NeverVerify" }))
      put(`${dir}/30-last.conf`, eksDropIn({ imagePullCredentialsVerificationPolicy: "NeverVerifyPreloadedImages" }))
      put(`${dir}/99-ignored.json`, eksDropIn({ imagePullCredentialsVerificationPolicy: "Broken" }))
      const { verification } = yield* read("/etc/kubernetes/kubelet/config.json", dir)
      expect(verification).toEqual({
        policy: "NeverVerifyPreloadedImages",
        source: `/etc/kubernetes/kubelet/config.json with drop-ins ${dir}/10-first.conf, ${dir}/2/50-nested.conf, ${dir}/30-last.conf`
      })
      rmSync(join(root, dir, "30-last.conf"))
      expect((yield* read("/etc/kubernetes/kubelet/config.json", dir)).verification.policy).toBe("NeverVerify")
      const gone = yield* read("/etc/kubernetes/kubelet/config.json", "/etc/kubernetes/kubelet/none.d")
      expect(gone.verification.message).toMatch(/^the drop-in files in \/etc\/kubernetes\/kubelet\/none\.d could not be read: NotFound/)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("the daemon writes it into its NodeImage's status once, and again only when the file changes", () =>
    Effect.gen(function* () {
      put("var/lib/kubelet/config.yaml", kubeadm)
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* launch({ kubeletConfig: { file: "/var/lib/kubelet/config.yaml", hostRoot: root } })
      yield* advanceWithFiles(3000)
      const metrics = yield* Metrics
      const log = yield* PatchLog
      const verification = () => Effect.map(nodeStatus, (s) => s["kubeletImageVerification"] as KubeletImageVerification | undefined)
      expect(yield* verification()).toMatchObject({ policy: "NeverVerifyPreloadedImages", source: "/var/lib/kubelet/config.yaml" })
      expect(yield* metrics.read("preheat_node_image_verification_policy", { policy: "NeverVerifyPreloadedImages" })).toBe(1)
      expect(yield* metrics.read("preheat_node_image_verification_policy", { policy: "AlwaysVerify" })).toBe(0)
      const written = log.statusPatches.length
      // Read again every minute: the same file writes nothing.
      yield* advanceWithFiles(5 * 60_000)
      expect(log.statusPatches).toHaveLength(written)

      put("var/lib/kubelet/config.yaml", withLines(kubeadm, "imagePullCredentialsVerificationPolicy: AlwaysVerify"))
      yield* advanceWithFiles(61_000)
      expect(yield* verification()).toEqual({ policy: "AlwaysVerify", source: "/var/lib/kubelet/config.yaml" })
      expect(log.statusPatches).toHaveLength(written + 1)
      expect(log.statusPatches.at(-1)?.body).toEqual({
        status: { kubeletImageVerification: { policy: "AlwaysVerify", message: null } }
      })
      expect(yield* metrics.read("preheat_node_image_verification_policy", { policy: "AlwaysVerify" })).toBe(1)
      expect(yield* metrics.read("preheat_node_image_verification_policy", { policy: "NeverVerifyPreloadedImages" })).toBe(0)

      rmSync(join(root, "var/lib/kubelet/config.yaml"))
      yield* advanceWithFiles(61_000)
      expect(yield* verification()).toMatchObject({ policy: "Unknown" })
      expect(yield* metrics.read("preheat_node_image_verification_policy", { policy: "Unknown" })).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(testLayer(), NodeFileSystem.layer)))
  )

  it.effect("without --kubelet-config (simulated nodes) the status keeps what it says", () =>
    Effect.gen(function* () {
      const api = yield* KubeApi
      yield* createNodeImage({ nginx: { tags: [tag("1.25")] } })
      yield* api.patch(
        resources.nodeImage,
        { name: "node-1" },
        { status: { kubeletImageVerification: { policy: "AlwaysVerify" } } },
        "status"
      )
      yield* launch()
      yield* advance(3000)
      expect((yield* nodeStatus)["kubeletImageVerification"]).toEqual({ policy: "AlwaysVerify" })
      expect((yield* tagStatus("nginx", "1.25"))?.phase).toBe("Succeeded")
    }).pipe(Effect.scoped, Effect.provide(Layer.merge(testLayer(), NodeFileSystem.layer)))
  )
})

describe("a pull with credentials says so in the tag's status", () => {
  const image = "registry.example.com/team/app"

  it.effect("authenticated when the registry took a pull secret's credential; absent for an anonymous pull", () =>
    Effect.gen(function* () {
      const fake = yield* SimulatedRuntime
      const api = yield* KubeApi
      yield* fake.requireAuth(image, (auth: RegistryAuth | undefined) => auth?.username === "good")
      yield* api.create(resources.secret, secret("creds", { "registry.example.com": { username: "good", password: "yes" } }))
      yield* createNodeImage({
        [image]: { pullSecrets: [{ namespace: secretNamespace, name: "creds" }], tags: [tag("v1")] },
        nginx: { tags: [tag("1.25")] }
      })
      yield* launch()
      yield* advance(3000)
      expect(yield* tagStatus(image, "v1")).toMatchObject({ phase: "Succeeded", authenticated: true })
      const anonymous = yield* tagStatus("nginx", "1.25")
      expect(anonymous?.phase).toBe("Succeeded")
      expect(anonymous).not.toHaveProperty("authenticated")
    }).pipe(Effect.scoped, Effect.provide(testLayer()))
  )
})
