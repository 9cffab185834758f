import { Duration, Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeImagePullJob } from "../../src/api/decode.ts"
import type { KubeObject } from "../../src/kube/KubeApi.ts"
import { imageChanges, newImages, setImagePatch } from "../../src/rollout/imageChanges.ts"
import { readTemplate } from "../../src/rollout/podTemplate.ts"
import type { WorkloadTemplate } from "../../src/rollout/podTemplate.ts"
import { podNodes, rolloutJobs } from "../../src/rollout/rolloutJobs.ts"
import { parseWorkload } from "../../src/rollout/workloadArgument.ts"

const deployment: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "shop", uid: "uid-web" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        initContainers: [{ name: "init", image: "busybox:1.36" }],
        containers: [
          { name: "web", image: "nginx:1.25" },
          { name: "sidecar", image: "busybox:1.36" }
        ],
        imagePullSecrets: [{ name: "regcred" }, { name: "" }]
      }
    }
  }
}

const template = (): WorkloadTemplate => {
  const read = readTemplate(deployment, "deployment.apps/web")
  if (Result.isFailure(read)) throw read.failure
  return read.success
}

const changes = (settings: ReadonlyArray<{ container: string; image: string }>) => {
  const result = imageChanges(template(), settings)
  if (Result.isFailure(result)) throw result.failure
  return result.success
}

describe("the pod template", () => {
  it("reads containers then init containers, the selector, the uid and named pull secrets", () => {
    expect(template()).toEqual({
      uid: "uid-web",
      selector: { matchLabels: { app: "web" } },
      containers: [
        { list: "containers", name: "web", image: "nginx:1.25" },
        { list: "containers", name: "sidecar", image: "busybox:1.36" },
        { list: "initContainers", name: "init", image: "busybox:1.36" }
      ],
      pullSecrets: ["regcred"]
    })
  })

  it("without containers is an error naming the workload", () => {
    const read = readTemplate({ metadata: { name: "x" }, spec: { selector: {}, template: { spec: {} } } }, "statefulset.apps/x")
    expect(Result.isFailure(read) && read.failure.message).toBe(
      "statefulset.apps/x has no spec.selector or no containers in its pod template"
    )
  })
})

describe("which containers change, and which images are new", () => {
  it("a container named that is not in the template fails in kubectl's words", () => {
    const result = imageChanges(template(), [
      { container: "web", image: "nginx:1.26" },
      { container: "nope", image: "x:1" }
    ])
    expect(Result.isFailure(result) && result.failure.message).toBe('unable to find container named "nope"')
  })

  it("a container already on the image is no change", () => {
    expect(changes([{ container: "web", image: "nginx:1.25" }])).toEqual([])
  })

  it("* sets every container and init container, a name overrides it", () => {
    expect(
      changes([
        { container: "*", image: "app:2" },
        { container: "init", image: "busybox:1.36" }
      ])
    ).toEqual([
      { list: "containers", name: "web", from: "nginx:1.25", to: "app:2" },
      { list: "containers", name: "sidecar", from: "busybox:1.36", to: "app:2" }
    ])
  })

  it("an image some container runs already is not new; one image for two containers is one new image", () => {
    const plan = changes([
      { container: "web", image: "busybox:1.36" },
      { container: "sidecar", image: "envoy:1.30" },
      { container: "init", image: "envoy:1.30" }
    ])
    expect(newImages(template(), plan)).toEqual([{ image: "envoy:1.30", containers: ["sidecar", "init"] }])
  })
})

describe("the patch", () => {
  // The bodies kubectl 1.32 sent for `kubectl set image` on this Deployment (kubectl -v=8);
  // test/rollout/rolloutCommand.test.ts compares against kubectl itself as well.
  it("is kubectl's strategic merge patch for one container, byte for byte", () => {
    expect(JSON.stringify(setImagePatch(template(), changes([{ container: "web", image: "nginx:1.26" }])))).toBe(
      '{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"sidecar"}],' +
        '"containers":[{"image":"nginx:1.26","name":"web"}]}}}}'
    )
  })

  it("is kubectl's for containers and init containers", () => {
    const body = setImagePatch(
      template(),
      changes([
        { container: "sidecar", image: "busybox:1.37" },
        { container: "init", image: "busybox:1.37" }
      ])
    )
    expect(JSON.stringify(body)).toBe(
      '{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"},{"name":"sidecar"}],' +
        '"$setElementOrder/initContainers":[{"name":"init"}],"containers":[{"image":"busybox:1.37","name":"sidecar"}],' +
        '"initContainers":[{"image":"busybox:1.37","name":"init"}]}}}}'
    )
  })
})

const pod = (name: string, nodeName: string | undefined, extra: { phase?: string; deleting?: boolean } = {}): KubeObject => ({
  metadata: { name, namespace: "shop", ...(extra.deleting === true ? { deletionTimestamp: "2026-12-01T10:00:00Z" } : {}) },
  spec: { ...(nodeName === undefined ? {} : { nodeName }), containers: [] },
  status: { phase: extra.phase ?? "Running" }
})

describe("the nodes of the workload's pods", () => {
  it("are those of active pods, once each, sorted", () => {
    expect(
      podNodes([
        pod("a", "node-3"),
        pod("b", "node-1"),
        pod("c", "node-3"),
        pod("pending", undefined),
        pod("done", "node-4", { phase: "Succeeded" }),
        pod("failed", "node-5", { phase: "Failed" }),
        pod("going", "node-6", { deleting: true })
      ])
    ).toEqual(["node-1", "node-3"])
  })
})

describe("the ImagePullJobs", () => {
  const ref = parseWorkload(["deploy/web"])
  if (Result.isFailure(ref)) throw ref.failure
  const input = {
    workload: ref.success,
    namespace: "shop",
    template: template(),
    images: [
      { image: "nginx:1.26", containers: ["web"] },
      { image: "envoy:1.30", containers: ["sidecar", "init"] }
    ],
    nodes: ["node-1", "node-3"],
    rolloutId: "abc123",
    parallelism: 10,
    timeout: undefined
  }

  it("one per new image, on the pods' nodes, owned by the workload (not as its controller), labelled with the run", () => {
    const [web, envoy] = rolloutJobs(input)
    expect(web).toEqual({
      apiVersion: "apps.kruise.io/v1alpha1",
      kind: "ImagePullJob",
      metadata: {
        namespace: "shop",
        generateName: "web-web-",
        labels: { "preheat.kruise.io/rollout": "abc123", "app.kubernetes.io/managed-by": "preheat" },
        annotations: { "preheat.kruise.io/rollout-workload": "deployment.apps/web" },
        ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "uid-web" }]
      },
      spec: {
        image: "nginx:1.26",
        parallelism: 10,
        selector: { names: ["node-1", "node-3"] },
        completionPolicy: { type: "Always", ttlSecondsAfterFinished: 3600 },
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 300 },
        pullSecrets: ["regcred"],
        imagePullPolicy: "IfNotPresent"
      }
    })
    expect(envoy?.metadata.generateName).toBe("web-sidecar-")
    expect(envoy?.["spec"]).toMatchObject({ image: "envoy:1.30" })
  })

  it("decode as valid ImagePullJobs", () => {
    for (const job of rolloutJobs({ ...input, timeout: Duration.seconds(30) })) {
      expect(Result.isSuccess(decodeImagePullJob({ ...job, metadata: { ...job.metadata, name: "x" } }))).toBe(true)
    }
  })

  it("with --timeout give up then too, and no pull outlasts it", () => {
    const [job] = rolloutJobs({ ...input, timeout: Duration.millis(29_500) })
    expect(job?.["spec"]).toMatchObject({
      completionPolicy: { type: "Always", ttlSecondsAfterFinished: 3600, activeDeadlineSeconds: 30 },
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 30 }
    })
  })

  it("select by the workload's selector beyond the 256 node names a job may list", () => {
    const nodes = Array.from({ length: 257 }, (_, i) => `node-${i}`)
    const [job] = rolloutJobs({ ...input, nodes })
    expect(job?.["spec"]).toMatchObject({ podSelector: { matchLabels: { app: "web" } } })
    expect(job?.["spec"]).not.toHaveProperty("selector")
  })

  it("keep generateName within the 58 characters Kubernetes keeps", () => {
    const long = parseWorkload([`deploy/${"a".repeat(70)}`])
    if (Result.isFailure(long)) throw long.failure
    const [job] = rolloutJobs({ ...input, workload: long.success })
    expect(job?.metadata.generateName).toBe(`${"a".repeat(57)}-`)
  })
})
